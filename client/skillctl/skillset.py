"""``SkillSet``: the Python API for agent builders: discover -> route -> prompt, plus tools.

    from skillctl import SkillSet
    skills = SkillSet.discover()                  # workspace, project, user, bundled, extra folders
    matches = skills.route("deploy the api to staging")
    block = skills.prompt("deploy the api to staging", tier="auto")
    tools = skills.tool_definitions("anthropic")  # load_skill / read_skill_file (+ MCP tools)
    text = skills.handle_tool_call("load_skill", {"name": matches[0].name})
    skills.close()                                # stops the MCP servers loaded skills started

Routing reads the on-disk index (only new or changed skills are parsed); full parsing of a skill
happens when its instructions are needed. Semantic routing is used when the ``semantic`` extra
is installed (``semantic=False`` turns it off). Tools run in a session
(:mod:`skillctl.runtime.session`, ``skills.session()``): it keeps the skills it started with
until it ends, and a loaded skill's MCP server runs until ``close()`` (or the end of a
``with SkillSet.discover() as skills:`` block). ``reload()`` re-reads the skill folders, and
``watch()`` does it whenever they change (:mod:`skillctl.runtime.watch`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skillctl import discovery
from skillctl.routing.index import Entry, RoutingIndex, load_index
from skillctl.routing.scoring import Match
from skillctl.routing.weights import DEFAULT_WEIGHTS, Weights


class SkillSet:
    def __init__(
        self,
        roots: Sequence[tuple[str, Path]],
        *,
        semantic: bool | None = None,
        reindex: bool = False,
        config=None,
        weights: Weights = DEFAULT_WEIGHTS,
        ignore_gates: bool = False,
        agent: str | None = None,
        tool_policy=None,
        mcp_call_timeout: float | None = None,
        reporter=None,
        manage_skills: bool = False,
        approve=None,
    ) -> None:
        from skillctl.reporting import Reporter
        from skillctl.routing import semantic as sem

        self.roots = list(roots)
        self.config = config
        # Route as if on another machine (or for evaluation): no OS/binary/env/config gates, and
        # this machine's enable/disable settings don't apply either.
        self.ignore_gates = ignore_gates
        threshold = config.setting("keyword_threshold") if config is not None else None
        if threshold is not None and weights is DEFAULT_WEIGHTS:  # seed 000's config key
            weights = weights.with_values(threshold=threshold)
        self.weights = weights
        self.semantic = sem.available() if semantic is None else semantic and sem.available()
        located = discovery.locate(self.roots)
        self.index: RoutingIndex = load_index(located, roots=self.roots, semantic=self.semantic, rebuild=reindex)
        self._parsed: dict[str, discovery.InstalledSkill | None] = {}
        self._router = None
        self._offered: list[Entry] | None = None
        self._installed: set[str] | None = None
        self.agent = agent  # whose [agents.<name>.tools] policy applies (config)
        self._tool_policy = tool_policy  # a ToolPolicy given in code instead of the config's
        self._mcp_call_timeout = mcp_call_timeout  # seconds an MCP tool call may take
        self.reporter = reporter or Reporter()  # warnings of sessions and watchers; quiet by default
        self.manage_skills = manage_skills  # offer the skill_management tool (runtime.management)
        self._approve = approve  # the application's yes/no to a skill_management install or create
        self._session = None
        self._resumed: Any = None  # a saved Snapshot the next session starts from (resume)
        self._watchers: list = []
        self._reload_lock = threading.Lock()  # one reload at a time (a watcher's and the caller's)

    # --- construction ---------------------------------------------------------------------

    @classmethod
    def discover(
        cls,
        *,
        project_dir: Path | None = None,
        include_user: bool = True,
        extra_dirs: Sequence[Path] = (),
        bundled_dirs: Sequence[Path] = (),
        config=None,
        **kwargs,
    ) -> SkillSet:
        """Installed skills: workspace > project > user > bundled > extra folders (config
        ``skill_dirs`` among the extra ones); ``bundled_dirs`` are the host application's own."""
        extra = [*extra_dirs, *(config.skill_dirs if config is not None else [])]
        roots = discovery.skill_roots(
            project_dir=project_dir, include_user=include_user, extra_dirs=extra, bundled_dirs=bundled_dirs
        )
        return cls(roots, config=config, **kwargs)

    @classmethod
    def resume(cls, path: Path | str, **kwargs) -> SkillSet:
        """The SkillSet of a saved session snapshot (``session.snapshot().save(path)``): the same
        folders, and a first session that starts from the saved snapshot, loaded skills again."""
        from skillctl.runtime.snapshot import Snapshot

        saved = Snapshot.load(path)
        skills = cls([(scope, Path(folder)) for scope, folder in saved.roots], **kwargs)
        skills._resumed = saved.against(skills.index)
        return skills

    @classmethod
    def from_dir(cls, root: Path, **kwargs) -> SkillSet:
        """Every skill folder under ``root`` (recursively; ``.git``/``node_modules`` skipped)."""
        return cls([("dir", Path(root))], **kwargs)

    # --- what is there --------------------------------------------------------------------

    @property
    def names(self) -> list[str]:
        return [e.name for e in self.index.entries]

    @property
    def collisions(self) -> list[discovery.Collision]:
        return self.index.collisions

    def entry(self, name: str) -> Entry | None:
        return next((e for e in self.index.entries if e.name == name), None)

    def get(self, name: str) -> discovery.InstalledSkill | None:
        """The parsed skill (SKILL.md read now, once)."""
        if name not in self._parsed:
            entry = self.entry(name)
            self._parsed[name] = discovery.load_installed(entry.scope, Path(entry.path)) if entry else None
        return self._parsed[name]

    def enabled(self, entry: Entry) -> bool:
        """Disabled (``[skills.<key>] enabled = false``, or ``default_enabled: false`` and not
        enabled in config) means never offered: the same rule as ``skillctl check``."""
        from skillctl.gating import is_enabled

        setting = self.config.skill_settings(entry.key).get("enabled") if self.config is not None else None
        return is_enabled(setting, entry.default_enabled)

    def offered(self) -> list[Entry]:
        """The skills the model may be offered: enabled, model invocation allowed, and able to
        work here (the gates of ``skillctl check``: OS, binaries, env, config, other skills)."""
        index, offered = self.index, self._offered
        if offered is None:
            offered = [e for e in index.entries if not self.why_not_offered(e)]
            if self.index is index:  # not reloaded meanwhile
                self._offered = offered
        return offered

    def left_out(self) -> dict[str, str]:
        """Installed skills the model is not offered, each with why (for ``route --explain``)."""
        return {e.name: why for e in self.index.entries if (why := self.why_not_offered(e))}

    def why_not_offered(self, entry: Entry) -> str:
        """Empty when the skill may be offered, else the reason it is not."""
        if not entry.model_invocable:
            return "disable-model-invocation"
        if self.ignore_gates:
            return ""
        if not self.enabled(entry):
            return "disabled (skillctl check)"
        return self.gate_failures(entry)

    def gate_failures(self, entry: Entry) -> str:
        """Why the skill cannot work on this machine (OS, binaries, env, config, other skills),
        or "" (the gates of ``skillctl check``; enabling is :meth:`enabled`)."""
        if not entry.gates:
            return ""
        from skillctl.gating import Gates, check

        if self._installed is None:
            self._installed = set(self.names)
        gates = Gates.from_dict(entry.gates)
        result = check(gates, config=self.config, installed=self._installed, skill_dir=Path(entry.path))
        return "; ".join(f.reason for f in result.failures)

    def set_enabled(self, name: str, enabled: bool) -> None:
        """Enable or disable an installed skill in config.toml (``[skills.<key>] enabled``: what
        ``skillctl check`` reads); this SkillSet offers and routes accordingly from now on."""
        from skillctl.config import load_config, skill_enabled_set
        from skillctl.errors import SkillctlError

        entry = self.entry(name) if isinstance(name, str) else None
        if entry is None:
            raise SkillctlError(
                f"no skill named {name!r}",
                hint="`skillctl list` shows the installed skills.",
                code="tool.unknown_skill",
            )
        skill_enabled_set(entry.key, enabled, self.config)
        if self.config is None:
            self.config = load_config()
        self._offered, self._router = None, None

    def reload(self) -> bool:
        """Read the skill folders again (only new, changed or removed skills are parsed); True
        when anything changed. Running sessions keep their snapshot."""
        with self._reload_lock:
            located = discovery.locate(self.roots)
            if self.index.still_current(located):
                return False
            index = load_index(located, roots=self.roots, semantic=self.semantic)
            # The fingerprint too: it changes with the registry's routing manifest of a skill,
            # which can arrive after the install (the registry's manifest check finishing).
            before = [(e.name, e.path, e.digest, e.fingerprint) for e in self.index.entries]
            if before == [(e.name, e.path, e.digest, e.fingerprint) for e in index.entries]:
                # The same skills: the routers built on this index stay; it is now as fresh.
                self.index.sources, self.index.loaded_ns = index.sources, index.loaded_ns
                return False
            self.index = index
            self._parsed, self._router, self._offered, self._installed = {}, None, None, None
            return True

    def refresh(self) -> None:
        """Catch up with the skill folders (:meth:`reload`) and with this machine: the gates
        (env, binaries, config) are checked again, and the router is kept while the offered
        skills stay the same (what a long-lived process routing many messages wants)."""
        if self.reload():
            return
        index = self.index
        offered = [e for e in index.entries if not self.why_not_offered(e)]
        if [e.name for e in offered] != [e.name for e in self._offered or ()]:
            self._offered, self._router = offered, None

    def watch(self, *, debounce_ms: int | None = None, on_reload=None):
        """Reload whenever the skill folders change, in a background thread, until ``stop()`` or
        ``close()`` (skillctl.runtime.watch; needs the ``agent`` extra's watchfiles)."""
        from skillctl.runtime.watch import DEBOUNCE_MS, Watcher

        watcher = Watcher(self, debounce_ms=debounce_ms or DEBOUNCE_MS, on_reload=on_reload).start()
        self._watchers.append(watcher)
        return watcher

    # --- routing --------------------------------------------------------------------------

    def router(self):
        index, router = self.index, self._router
        if router is None:
            router = self.router_over(self.offered())
            if self.index is index:  # not reloaded meanwhile (a watcher runs in another thread)
                self._router = router
        return router

    def router_over(self, entries: list[Entry]):
        """A router over ``entries`` (a session routes over its snapshot's)."""
        from skillctl.routing import semantic as sem
        from skillctl.routing.router import Router

        vectors = encoder = llm_gate = None
        if self.semantic and entries:
            from skillctl.routing.llm_gate import LlmGate

            whole = RoutingIndex(entries).vectors()
            vectors, encoder = whole, (sem.encoder() if whole is not None else None)
            llm_gate = LlmGate.from_config(self.config)  # None unless [routing.llm] turns it on
        return Router(
            [e.manifest for e in entries],
            compiled=[e.compiled for e in entries],
            vectors=vectors,
            encoder=encoder,
            weights=self.weights,
            llm_gate=llm_gate,
        )

    def nearest(self, message: str, *, history: Sequence[str] = (), k: int = 3) -> list[dict]:
        """The ``k`` skills closest to a message, each with its score and what stopped it: a
        threshold, the "needs no skill" gate, or a gate of this machine (``route --explain``)."""
        left_out = self.left_out()
        router = self.router() if not left_out else self.router_over(list(self.index.entries))
        near = []
        for match, why in router.nearest(message, history=history)[:k]:
            if match.name in left_out:
                why = f"not offered here: {left_out[match.name]}"
            near.append({"name": match.name, "score": round(match.score, 4), "stopped_by": why})
        return near

    def route(self, message: str, *, history: Sequence[str] = (), recent: bool = True) -> list[Match]:
        """At most 3 skills for ``message``, best first, each with its reasons; [] when none fits."""
        from skillctl.routing import state

        boost = state.recent_skills() if recent else frozenset()
        return self.router().route(message, history=history, recent=boost)

    def record_use(self, names: list[str]) -> None:
        from skillctl.routing import state

        state.record_use(names)

    # --- prompt ---------------------------------------------------------------------------

    def prompt(
        self,
        message: str | None = None,
        *,
        tier: str = "auto",
        fmt: str = "xml",
        history: Sequence[str] = (),
        chosen: Sequence[str] | None = None,
        budget: int | None = None,
    ) -> str:
        return self.build_prompt(message, tier=tier, fmt=fmt, history=history, chosen=chosen, budget=budget)[1]

    def build_prompt(
        self, message=None, *, tier="auto", fmt="xml", history=(), chosen=None, budget=None
    ) -> tuple[str, str]:
        """(tier used, block). ``chosen`` names skills for the full tier instead of routing;
        ``budget``: the tokens ``auto`` may spend on a catalog when routing chose nothing."""
        from skillctl import prompt

        if chosen is None:
            chosen = (
                [m.name for m in self.route(message, history=history)] if message and tier in ("auto", "full") else []
            )
        else:
            self._check_names(chosen)
        offered, near = self.offered(), True
        if message and not chosen and tier == "auto":
            # Routing found nothing: the catalog goes out closest first, so a budget cut drops
            # the least likely skills and the model can still pick one routing missed.
            nearest = self._nearest_offered(message, history)
            order = {name: i for i, name in enumerate(nearest)}
            offered, near = sorted(offered, key=lambda e: order.get(e.name, len(order))), bool(nearest)
        visible = [
            prompt.CatalogItem(e.name, e.manifest.brief or e.manifest.description, str(Path(e.path) / "SKILL.md"))
            for e in offered
        ]
        full = [prompt.load_full(s, config=self.config) for n in chosen if (s := self.get(n))]
        return prompt.render(
            tier,
            fmt=fmt,
            visible=visible,
            chosen=full,
            has_message=bool(message),
            near=near,
            budget=budget or prompt.CATALOG_BUDGET_TOKENS,
        )

    def _nearest_offered(self, message: str, history: Sequence[str]) -> list[str]:
        """The offered skills that come near the message at all (a positive score), closest first."""
        if not self.offered():
            return []
        return [m.name for m, _ in self.router().nearest(message, history=history) if m.score > 0]

    def _check_names(self, names: Sequence[str]) -> None:
        import difflib

        from skillctl.errors import UsageError

        unknown = [n for n in names if self.entry(n) is None]
        if unknown:
            close = difflib.get_close_matches(unknown[0], self.names, n=3)
            raise UsageError(
                f"no installed skill named {', '.join(map(repr, unknown))}",
                hint=(f"did you mean {', '.join(close)}? " if close else "")
                + "`skillctl list` shows the installed skills",
                code="prompt.unknown_skill",
            )

    # --- tools ----------------------------------------------------------------------------

    def session(self):
        """The conversation's session (skillctl.runtime.session): its snapshot of the skills,
        the active skill and pipeline, the tool policy, the MCP servers of loaded skills. The
        same one until it is closed; then the next call starts a new one."""
        if self._session is None or self._session.closed:
            from skillctl.runtime.policy import ToolPolicy
            from skillctl.runtime.session import Session

            policy = self._tool_policy or ToolPolicy.from_config(self.config, agent=self.agent)
            self._session = Session(
                self,
                policy=policy,
                mcp_call_timeout=self._mcp_call_timeout,
                reporter=self.reporter,
                manage=self.manage_skills,
                approve=self._approve,
                snapshot=self._resumed,
            )
            self._resumed = None
        return self._session

    @property
    def tool_policy(self):
        """The session's tool policy now (narrowed by loaded skills): ``.allows("exec")`` says
        whether the agent may offer its own tools too."""
        return self.session().policy

    def tool_definitions(self, provider: str = "openai") -> list[dict]:
        """The session's tools: load_skill, read_skill_file, and what loaded skills add (ask
        again after a load_skill: MCP tools, skill_transition)."""
        return self.session().tool_definitions(provider)

    def handle_tool_call(self, tool: str, arguments: dict | str) -> str:
        return self.session().handle_tool_call(tool, arguments)

    def close(self) -> None:
        """End the session (stopping the MCP servers loaded skills started) and stop watching."""
        if self._session is not None:
            self._session.close()
        watchers, self._watchers = self._watchers, []
        for watcher in watchers:
            watcher.stop()

    def __enter__(self) -> SkillSet:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
