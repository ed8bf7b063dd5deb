from django.contrib import admin
from django.urls import include, path

from registry.api import wellknown

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("registry.api.urls")),
    path(".well-known/skills/index.json", wellknown.SkillsIndex.as_view(), name="wellknown-skills"),
    path(".well-known/agent-skills/index.json", wellknown.AgentSkillsIndex.as_view(), name="wellknown-agent-skills"),
    path(".well-known/agent-skills/<str:name>/<str:version>.zip", wellknown.archive, name="wellknown-archive"),
    path(".well-known/skills/<str:name>/<path:path>", wellknown.skill_file, name="wellknown-file"),
    path("", include("catalog.urls")),
]

handler400 = "registry.api.problems.handler400"
handler403 = "registry.api.problems.handler403"
handler404 = "registry.api.problems.handler404"
handler500 = "registry.api.problems.handler500"
