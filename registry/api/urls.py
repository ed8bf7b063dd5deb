from django.urls import path
from drf_spectacular.views import SpectacularAPIView

from registry.api import accounts, advisories, diff, downloads, skills
from registry.api.docs import api_docs
from registry.api.index import ApiIndex

app_name = "api"

urlpatterns = [
    path("", ApiIndex.as_view(), name="index"),
    path("skills", skills.SkillList.as_view(), name="skill-list"),
    path("routing-manifests", skills.RoutingManifests.as_view(), name="routing-manifests"),
    path("skills/<str:name>", skills.SkillDetail.as_view(), name="skill-detail"),
    path("skills/<str:name>/download", downloads.Download.as_view(), name="skill-download"),
    path("skills/<str:name>/versions", skills.VersionList.as_view(), name="version-list"),
    path("skills/<str:name>/versions/<str:version>", skills.VersionDetail.as_view(), name="version-detail"),
    path(
        "skills/<str:name>/versions/<str:version>/download",
        downloads.VersionDownload.as_view(),
        name="version-download",
    ),
    path("skills/<str:name>/versions/<str:version>/yank", skills.Yank.as_view(), name="version-yank"),
    path(
        "skills/<str:name>/versions/<str:version>/checks/<str:check>/rerun",
        skills.CheckRerun.as_view(),
        name="check-rerun",
    ),
    path("skills/<str:name>/versions/<str:version>/deprecate", skills.Deprecate.as_view(), name="version-deprecate"),
    path("skills/<str:name>/diff/<str:old>/<str:new>", diff.VersionDiffView.as_view(), name="version-diff"),
    path("skills/<str:name>/dist-tags", skills.DistTags.as_view(), name="dist-tags"),
    path("skills/<str:name>/dist-tags/<str:tag>", skills.DistTagDetail.as_view(), name="dist-tag-detail"),
    path("skills/<str:name>/advisories", advisories.SkillAdvisories.as_view(), name="skill-advisories"),
    path("advisories", advisories.AdvisoryFeed.as_view(), name="advisory-feed"),
    path("advisories/<str:osv_id>", advisories.AdvisoryDetail.as_view(), name="advisory-detail"),
    path("advisories/<str:osv_id>/withdraw", advisories.AdvisoryWithdraw.as_view(), name="advisory-withdraw"),
    path("audit", advisories.Audit.as_view(), name="audit"),
    path("orgs", accounts.OrgList.as_view(), name="org-list"),
    path("orgs/<str:org>", accounts.OrgDetail.as_view(), name="org-detail"),
    path("orgs/<str:org>/members", accounts.OrgMembers.as_view(), name="org-members"),
    path("orgs/<str:org>/members/<str:username>", accounts.OrgMemberDetail.as_view(), name="org-member-detail"),
    path("tokens", accounts.TokenList.as_view(), name="token-list"),
    path("tokens/<int:token_id>", accounts.TokenDetail.as_view(), name="token-detail"),
    path("me", accounts.Me.as_view(), name="me"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", api_docs, name="docs"),
]
