"""The v1 HTTP API (DRF): thin views over registry.services and registry.selectors."""
