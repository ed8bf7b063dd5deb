"""The one place the ``agent`` extra's packages (the ``mcp`` SDK, ``watchfiles``) are imported
from, with the error that names the extra."""

from __future__ import annotations

from skillctl.errors import SkillctlError

EXTRA = "agent"
INSTALL_HINT = f"Install the MCP support: pip install 'skillyard[{EXTRA}]'"


class McpUnavailable(SkillctlError):
    code = "runtime.mcp_missing"


def require_mcp():
    """The ``mcp`` package, or McpUnavailable saying which extra to install."""
    try:
        import mcp
    except ImportError as exc:
        raise McpUnavailable(f"the MCP SDK is not installed ({exc})", hint=INSTALL_HINT) from None
    return mcp


def require_watchfiles():
    """The ``watchfiles`` package (live reload), or the error naming the extra."""
    try:
        import watchfiles
    except ImportError as exc:
        raise SkillctlError(
            f"watchfiles is not installed ({exc})",
            hint=f"Install the agent runtime: pip install 'skillyard[{EXTRA}]'",
            code="runtime.watchfiles_missing",
        ) from None
    return watchfiles
