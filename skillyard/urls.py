from django.contrib import admin
from django.urls import include, path

from catalog import sso
from registry import health
from registry.api import compat, wellknown

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("registry.api.urls")),
    path(".well-known/skills/index.json", wellknown.SkillsIndex.as_view(), name="wellknown-skills"),
    path(".well-known/agent-skills/index.json", wellknown.AgentSkillsIndex.as_view(), name="wellknown-agent-skills"),
    path(".well-known/agent-skills/<str:name>/<str:version>.zip", wellknown.archive, name="wellknown-archive"),
    path(".well-known/skills/<str:name>/<path:path>", wellknown.skill_file, name="wellknown-file"),
    # Other clients' searches and installs against us (registry/api/compat.py).
    path("api/search", compat.SkillsFind.as_view(), name="compat-skills-find"),
    path(
        "skills/<str:scope>/.well-known/agent-skills/index.json",
        compat.ScopedAgentSkillsIndex.as_view(),
        name="compat-scoped-index",
    ),
    path(".well-known/clawhub.json", compat.clawhub_discovery, name="wellknown-clawhub"),
    path(f"{compat.CLAWHUB_PREFIX}/", include("registry.api.compat_urls")),
    # Single sign-on (catalog/sso.py; 404 while off). The names are the ones mozilla-django-oidc reverses.
    path("accounts/oidc/start/", sso.SignInStart.as_view(), name="oidc_authentication_init"),
    path("accounts/oidc/callback/", sso.SignInCallback.as_view(), name="oidc_authentication_callback"),
    # Probes and Prometheus' scrape (registry/health.py; docs/operations.md).
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", health.metrics_view, name="metrics"),
    path("", include("catalog.urls")),
]

handler400 = "registry.api.problems.handler400"
handler403 = "registry.api.problems.handler403"
handler404 = "registry.api.problems.handler404"
handler500 = "registry.api.problems.handler500"
