"""clawhub's /api/v1 routes, under compat.CLAWHUB_PREFIX (the apiBase of /.well-known/clawhub.json)."""

from django.urls import path

from registry.api import compat

urlpatterns = [
    path("api/v1/search", compat.ClawhubSearch.as_view(), name="clawhub-search"),
    path("api/v1/resolve", compat.ClawhubResolve.as_view(), name="clawhub-resolve"),
    path("api/v1/download", compat.ClawhubDownload.as_view(), name="clawhub-download"),
    path("api/v1/skills", compat.ClawhubSkills.as_view(), name="clawhub-skills"),
    path("api/v1/skills/<str:slug>", compat.ClawhubSkill.as_view(), name="clawhub-skill"),
    path("api/v1/skills/<str:slug>/file", compat.ClawhubFile.as_view(), name="clawhub-file"),
    path("api/v1/skills/<str:slug>/versions", compat.ClawhubVersions.as_view(), name="clawhub-versions"),
    path("api/v1/skills/<str:slug>/versions/<str:version>", compat.ClawhubVersion.as_view(), name="clawhub-version"),
]
