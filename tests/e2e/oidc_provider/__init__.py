"""A real OpenID Connect provider for the single sign-on test: a small Django project on
django-oidc-provider, run as its own process on loopback (server.py starts it, seed.py fills it).
Nothing here is a stand-in for the protocol: discovery, the authorization code flow with PKCE,
RS256 ID tokens from its own RSA key, its key set and userinfo are the library's."""
