"""Throttles whose rates are read per request from settings (env ``SKILLYARD_THROTTLE_*``).

DRF's own classes copy the rates once at import, which makes them impossible to change in a test
or a running shell; these read ``api_settings`` each time. A refusal is 429 with ``Retry-After``.
"""

from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle

from registry.clients import client_address


class _RateFromSettings:
    def get_rate(self):
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def get_ident(self, request):
        # DRF's own trusts any X-Forwarded-For when NUM_PROXIES is unset: a spoofed header
        # was a fresh identity per request. The client behind trusted proxies only.
        return client_address(request.META)


class AnonThrottle(_RateFromSettings, AnonRateThrottle):
    pass


class UserThrottle(_RateFromSettings, UserRateThrottle):
    pass


class PublishThrottle(_RateFromSettings, UserRateThrottle):
    scope = "publish"
