"""The agent runtime around a :class:`skillctl.skillset.SkillSet` (DESIGN section 12).

- ``policy``: which tools a session may offer and call (profiles, groups, allow/deny, a loaded
  skill's ``allowed-tools``); pure, no SDK.
- ``session``: the tools of one SkillSet session: policy, loaded skills, their MCP servers.
- ``mcp_clients``: the per-skill MCP servers (a skill's ``mcp`` block), run by the official SDK
  on a background event loop; every call has a deadline.
- ``mcp_server``: ``skillctl mcp``, the installed skills served to any MCP client.
- ``mcp_config``: ``skillctl mcp install AGENT``, the MCP config files of agents.

The ``mcp`` SDK is an optional extra (``pip install 'skillyard[agent]'``): it is imported only
by the modules that speak MCP, through :func:`skillctl.runtime.sdk.require_mcp`.
"""
