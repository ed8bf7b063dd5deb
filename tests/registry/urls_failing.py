"""A URLconf with one view that fails, to see the 500 problem answer."""

from django.urls import include, path


def fail(request):
    raise RuntimeError("boom")


urlpatterns = [path("api/v1/boom", fail), path("", include("skillyard.urls"))]
handler500 = "registry.api.problems.handler500"
