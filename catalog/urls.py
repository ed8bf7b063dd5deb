from django.contrib.auth import views as auth_views
from django.urls import path

from catalog import accounts, advisories, categories, diff, files, views

app_name = "catalog"

urlpatterns = [
    path("", views.home, name="home"),
    path("skills", views.browse, name="browse"),
    path("categories", categories.categories_page, name="categories"),
    path("skills/<str:name>", views.skill, name="skill"),
    path("skills/<str:name>/badge.svg", views.badge, name="badge"),
    path("skills/<str:name>/files/<path:path>", views.default_file_view, name="default-file"),
    path("skills/<str:name>/versions/<str:version>", views.version_page, name="version"),
    path("skills/<str:name>/versions/<str:version>/files/<path:path>", files.file_view, name="file"),
    path("skills/<str:name>/versions/<str:version>/raw/<path:path>", files.raw_file, name="raw"),
    path("skills/<str:name>/diff/<str:old>/<str:new>", diff.diff_page, name="diff"),
    path("skills/<str:name>/versions/<str:version>/manage", views.manage_version, name="manage-version"),
    path("skills/<str:name>/advisories", advisories.manage, name="manage-advisories"),
    path("advisories", advisories.advisory_list, name="advisories"),
    path("advisories/<str:osv_id>", advisories.advisory_page, name="advisory"),
    path("owners/<str:owner>/members", views.manage_members, name="manage-members"),
    path("owners/<str:owner>", views.owner_page, name="owner"),
    path("owners/<str:owner>/description", views.owner_describe, name="owner-describe"),
    path("publishers", views.publishers, name="publishers"),
    path("publish", views.publish, name="publish"),
    path("account/tokens", views.tokens, name="tokens"),
    path("accounts/login/", accounts.LoginView.as_view(), name="login"),
    path("accounts/signup/", accounts.signup, name="signup"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("catalog/code.css", views.pygments_css, name="code-css"),
]
