"""The agent runtime around a :class:`skillctl.skillset.SkillSet` (DESIGN section 12).

- ``policy``: which tools a session may offer and call (profiles, groups, allow/deny, a loaded
  skill's ``allowed-tools``); pure, no SDK.
- ``session``: one conversation over a SkillSet (``skills.session()``): its tools, policy,
  loaded skills and their MCP servers, its active skill.
- ``snapshot``: the skills a session started with; reloads never change it.
- ``pipeline``: the active skill and its transitions (``next_skill``, ``skill_transition``).
- ``management``: the ``skill_management`` tool (install and create need the app's approval).
- ``toolsets``: the trusted Python classes of a skill's ``toolsets``, their methods as tools.
- ``watch``: ``SkillSet.watch()``, live reload of the skill folders (watchfiles).
- ``agent_loop``: a small loop over a session and an OpenAI-compatible chat-completions server.
- ``mcp_clients``: the per-skill MCP servers (a skill's ``mcp`` block), run by the official SDK
  on a background event loop; every call has a deadline.
- ``mcp_spec``: what starts one skill's server (its trusted command, the declared vars it gets).
- ``mcp_trust``: the user's consent to a skill's MCP command (``[runtime] trusted_mcp``).
- ``mcp_server``: ``skillctl mcp``, the installed skills served to any MCP client.
- ``mcp_config``: ``skillctl mcp install AGENT``, the MCP config files of agents.

The ``mcp`` SDK and watchfiles are the optional ``agent`` extra (``pip install
'skillyard[agent]'``): they are imported only by the modules that need them, through
:mod:`skillctl.runtime.sdk`.
"""
