"""The client's error kinds and the one place exit codes are explained.

The base :class:`SkillctlError` and :class:`ExitCode` live in :mod:`skillctl.format.errors` (the
part the server imports); the kinds here are the CLI's: a usage error exits 2, a network or
registry failure 3, a digest mismatch 4. Every raise passes a stable ``area.problem`` code,
listed in :data:`CODES`; tracebacks are shown only with ``--debug``.
"""

from __future__ import annotations

from skillctl.format.errors import ExitCode, SkillctlError

__all__ = ["CODES", "EXIT_CODES_HELP", "ExitCode", "IntegrityError", "NetworkError", "SkillctlError", "UsageError"]

EXIT_CODES_HELP = (
    "Exit codes: 0 ok, 1 failure found, 2 usage error, 3 network or registry error, "
    "4 integrity error (a sha256 did not match)."
)


class UsageError(SkillctlError):
    exit_code = ExitCode.USAGE
    code = "cli.usage"


class NetworkError(SkillctlError):
    exit_code = ExitCode.NETWORK
    code = "network.failed"


class IntegrityError(SkillctlError):
    exit_code = ExitCode.INTEGRITY
    code = "integrity.mismatch"


# Every code a client error may carry, with what it means. Format findings have their own list
# (``skillctl.format.findings.CODES``); tests check that each raise uses a code listed here.
CODES: dict[str, str] = {
    "agents.unknown": "an --agent name skillctl does not know",
    "archive.dest_exists": "extracting into a path that already exists",
    "archive.refused": "an archive broke the archive rules (its findings say which)",
    "auth.no_token": "login was given no token",
    "auth.not_logged_in": "the command needs a token for this registry",
    "cli.failed": "a command failed (generic)",
    "cli.name_version": "an argument that should read NAME@VERSION",
    "cli.no_path": "the command needs a PATH",
    "cli.too_long": "a reason or message over its length limit",
    "cli.usage": "bad arguments or options (generic)",
    "config.invalid": "the config file is not valid TOML or has a wrong type",
    "config.invalid_key": "a config key is not a dotted name",
    "config.invalid_registry_name": "a registry name that cannot be used",
    "config.invalid_registry_url": "a registry URL that is not http(s)",
    "config.missing_key": "config get/unset of a key that is not set",
    "config.not_a_table": "a dotted key passes through a value",
    "config.token_key": "a token written into the config file instead of the keyring/env",
    "config.unknown_registry": "a registry name not in the config",
    "config.unnamed_registry": "a registry entry without a name",
    "download.too_large": "a download is over the archive size limit",
    "hook.bad_event": "an agent hook event skillctl does not handle",
    "hook.settings_invalid": "an agent's settings file is not valid JSON",
    "init.exists": "init into a folder that is not empty",
    "init.invalid_name": "init with a name the specification refuses",
    "init.write_failed": "init could not write the skeleton",
    "install.agent_needs_sources": "--agent without skills to link",
    "install.archive_refused": "an archive refused while installing",
    "install.collision": "another source already provides a skill of this name",
    "install.frozen_with_sources": "--frozen with skills named",
    "install.invalid_skill": "what was fetched is not a valid skill",
    "install.list_needs_source": "--list without a folder or repository",
    "install.local_changes": "an installed skill was edited; not replaced without --force",
    "install.malicious": "the registry's scan found the version malicious",
    "install.name_mismatch": "the archive holds a different skill than asked for",
    "install.no_matching_version": "no version matches the spec",
    "install.not_installed": "the skill is not installed in this scope",
    "install.registry_changed": "the skill's registry URL changed since it was locked",
    "install.scan_warn": "the registry's scan warns and nobody confirmed",
    "install.several_skills": "a folder or repository holds several skills and none was picked",
    "install.skill_and_all": "--skill with --all",
    "install.skill_not_in_source": "--skill names a skill the source does not hold",
    "integrity.archive_sha256": "a local archive changed since it was locked",
    "integrity.download_sha256": "a download does not hash to the expected sha256",
    "integrity.git_sha256": "a git source packs to other bytes than locked",
    "integrity.listed_sha256": "the registry lists another sha256 than the lock",
    "integrity.mismatch": "digests disagree (generic)",
    "integrity.publish_sha256": "the registry stored other bytes than were sent",
    "integrity.sha256_mismatch": "announced and received digests disagree",
    "integrity.url_sha256": "an archive URL serves other bytes than locked",
    "management.declined": "the application declined a skill_management install or create",
    "management.invalid_skill": "skill_management create would write a skill that is not valid",
    "management.needs_approval": "skill_management install or create without an approval callback",
    "management.no_scope": "skill_management install over skills with no project or user folder",
    "mcp.config_invalid": "an agent's MCP config file is not valid JSON",
    "mcp.crashed": "a skill's MCP server died",
    "mcp.error": "a skill's MCP server answered a call with an error",
    "mcp.missing_env": "a skill's MCP server needs a variable that is not set",
    "mcp.no_server": "the skill declares no MCP server",
    "mcp.no_user_config": "the agent has no user-level MCP config skillctl can write",
    "mcp.start_failed": "a skill's MCP server could not be started",
    "mcp.start_timeout": "a skill's MCP server did not start in time",
    "mcp.timeout": "a skill's MCP server did not answer in time",
    "mcp.tool_error": "a skill's MCP tool reported an error",
    "mcp.unsupported": "an MCP server kind skillctl cannot start (a remote url)",
    "migrate.nothing_to_do": "migrate found no single-line JSON metadata",
    "migrate.unsafe": "migrating would change the data",
    "migrate.write_failed": "migrate could not write SKILL.md",
    "model.bad_response": "the model's server did not answer with a chat completion",
    "model.http_error": "the model's server answered with an HTTP error",
    "model.unreachable": "the model's server could not be reached",
    "network.download_failed": "an archive URL could not be downloaded",
    "network.download_status": "an archive URL answered other than 200",
    "network.failed": "the network failed (generic)",
    "network.timeout": "the registry did not answer in time",
    "network.unreachable": "the registry could not be reached",
    "pack.invalid_skill": "the folder is not a valid skill",
    "pack.not_a_folder": "pack was given something other than a folder",
    "pack.unknown_kind": "pack's output name is neither .zip nor .tar.gz",
    "pack.write_failed": "pack could not write the archive",
    "pipeline.depth_limit": "a skill pipeline reached its limit of transitions for one user message",
    "pipeline.no_next_skills": "skill_transition while the active skill lists no conditional next skills",
    "pipeline.not_a_next_skill": "skill_transition to a skill the active skill does not list",
    "pipeline.skill_disabled": "a pipeline transition to a skill disabled in config",
    "pipeline.skill_gated": "a pipeline transition to a skill that fails a gate on this machine",
    "pipeline.unknown_skill": "a pipeline transition to a skill the session does not know",
    "policy.invalid": "the [tools] policy config has a mistake",
    "policy.unknown_group": "a tool policy names a group that does not exist",
    "policy.unknown_profile": "a tool policy names a profile that does not exist",
    "project.lock_mismatch": "skills.lock does not match skills.toml (--frozen)",
    "project.lock_version": "skills.lock was written by a newer skillctl",
    "project.manifest_invalid": "skills.toml or skills.lock is not valid",
    "project.not_in_manifest": "update of a skill not in skills.toml",
    "project.nothing_to_install": "install with no skills.toml here",
    "prompt.unknown_skill": "--skill names a skill that is not installed",
    "publish.all_version": "--version with --all",
    "publish.bad_version": "--version is not a semantic version",
    "publish.bump_archive": "--bump given an archive",
    "publish.bump_failed": "--bump could not write the version into SKILL.md",
    "publish.changelog_unreadable": "--changelog @FILE cannot be read",
    "publish.no_skills": "--all found no skill under the folder",
    "publish.no_version": "nothing says which version to publish",
    "publish.source_kind": "publish was given neither a folder nor an archive",
    "publish.source_missing": "publish was given a path that does not exist",
    "publish.version_mismatch": "--version differs from SKILL.md's version",
    "registry.bad_request": "the registry refused the request (400)",
    "registry.conflict": "the registry already has this (409)",
    "registry.forbidden": "the token lacks the scope or owner (403)",
    "registry.invalid": "the registry found the upload invalid (422)",
    "registry.invalid_response": "the registry answered with something other than JSON",
    "registry.not_found": "the registry has no such skill or version (404)",
    "registry.response_too_large": "a registry answer is over the client's limit",
    "registry.server_error": "the registry failed (5xx)",
    "registry.throttled": "the registry is throttling (429)",
    "registry.too_large": "the upload is over the registry's limit (413)",
    "registry.unauthorized": "no valid token (401)",
    "registry.unexpected_status": "the registry answered with an unexpected status",
    "route.ask_needs_message": "route --ask without a message",
    "route.ask_needs_terminal": "route --ask without a terminal",
    "route.bad_queries": "a --queries file that cannot be read",
    "route.no_message": "route without a message, --queries or --reindex",
    "run.input_not_json": "--input is not JSON",
    "run.input_unreadable": "--input @FILE cannot be read",
    "run.invalid_skill": "the skill to run is not valid",
    "run.not_found": "the skill to run is not installed",
    "runtime.config_invalid": "the [runtime] config has a mistake",
    "runtime.mcp_missing": "the agent extra (the mcp SDK) is not installed",
    "runtime.watchfiles_missing": "the agent extra (watchfiles, for SkillSet.watch) is not installed",
    "sandbox.request": "a sandbox request skillctl cannot honour",
    "sandbox.unavailable": "no sandbox backend works on this machine",
    "scan.no_path": "scan without a path",
    "scan.path_missing": "scan of a path that does not exist",
    "session.skill_changed": "a skill changed or went away on disk after the session started",
    "source.git_failed": "a git command failed",
    "source.git_missing": "git is not installed",
    "source.invalid": "an install argument skillctl cannot read",
    "source.no_skill_md": "the folder has no SKILL.md",
    "source.not_found": "a path or subfolder that does not exist",
    "tool.binary_file": "read_skill_file of a binary file",
    "tool.file_not_found": "read_skill_file of a missing file",
    "tool.file_too_large": "read_skill_file of a file over the limit",
    "tool.not_allowed": "the tool policy does not allow this tool",
    "tool.path_refused": "a path that leaves the skill folder",
    "tool.unknown": "a tool call skillctl does not offer",
    "tool.unknown_provider": "tool definitions for an unknown provider",
    "tool.unknown_skill": "a tool call naming a skill that is not offered",
    "toolset.call_failed": "a toolset method raised an exception",
    "toolset.load_failed": "a trusted toolset could not be imported or built",
    "toolset.untrusted": "a skill's toolset is not in the config's [runtime] trusted_toolsets",
    "transport.insecure_token": "a token would be sent over plain http",
    "transport.insecure_url": "a URL that is neither https nor loopback",
    "update.names_and_all": "update with NAMES and --all",
    "vars.invalid_file": "a vars file that cannot be read",
    "version.spec": "a version spec that is no version, range or tag",
}
