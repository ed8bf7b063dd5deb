"""A registry speaking the v1 read API over real HTTP, for the installer's tests.

It stands in for the internet edge only: the client under test uses its real HTTP client,
cache, extraction and file system. (tests/e2e runs the same flows against the real Django
registry.) Test modules import it as ``tests.client.installer.fakes``.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

SKILL_MD = """---
name: {name}
description: {name} does a small test thing when asked about {name}.
version: {version}
license: MIT
---

# {name}

Version {version} instructions.
"""


def make_skill(root: Path, name: str, version: str = "1.0.0", files: dict[str, str] | None = None) -> Path:
    folder = root / f"{name}-{version}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(SKILL_MD.format(name=name, version=version))
    for rel, text in (files or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


def pack(folder: Path, out_dir: Path) -> bytes:
    from skillctl.format import pack_skill

    out = out_dir / f"{folder.name}.zip"
    pack_skill(folder, out)
    return out.read_bytes()


class FakeRegistry:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.skills: dict[str, dict[str, dict]] = {}  # name -> version -> entry
        self.served: dict[tuple[str, str], bytes] = {}  # bytes served instead (tampering)
        self.requests: list[str] = []
        # False: an older registry whose versions list lacks `has_routing_manifest`.
        self.lists_routing_manifests = False
        # True: a current registry, which resolves a spec in the download request and says the
        # version, scan verdict and routing manifest in headers (False: 404, as an older one).
        self.resolves_downloads = False
        # True: a current registry, which answers the routing manifests of many versions in one
        # request (False: 404, as an older one).
        self.batches_manifests = False
        self.not_modified: list[str] = []  # downloads answered 304 (the client had the archive)
        # True: a current registry answering POST /audit (False: 404, as an older one).
        self.audits = False
        self.audit_bodies: list[dict] = []  # what each audit request asked
        self.advisories: list[dict] = []  # OSV objects, filed through the API or by the test
        self.as_of = "2026-11-28T10:00:00Z"
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def publish(
        self, name: str, version: str, files: dict[str, str] | None = None, routing_manifest: dict | None = None
    ) -> str:
        data = pack(make_skill(self.tmp / "src" / name, name, version, files), self.tmp)
        sha = hashlib.sha256(data).hexdigest()
        self.skills.setdefault(name, {})[version] = {
            "version": version,
            "sha256": sha,
            "size": len(data),
            "status": "published",
            "yanked": False,
            "yanked_reason": "",
            "data": data,
            "routing_manifest": routing_manifest,
        }
        return sha

    def set_version(self, name: str, version: str, **fields) -> None:
        """Change what the registry says about a version: ``yanked``, ``deprecated`` (the
        message), ``scan_verdict``, ``test_result`` and ``test_log`` (the tests check's log)."""
        self.skills[name][version].update(fields)

    def file_advisory(self, name: str, affected: str, *, summary: str = "bad", severity: str = "high") -> dict:
        """An advisory as the registry's API answers it (OSV, ecosystem Skillyard)."""
        advisory = {
            "id": f"SKY-2026-{len(self.advisories) + 1:04d}",
            "summary": summary,
            "details": "",
            "published": self.as_of,
            "modified": self.as_of,
            "affected": [{"package": {"ecosystem": "Skillyard", "name": name}, "ranges": [], "versions": []}],
            "database_specific": {"severity": severity, "affected_range": affected},
        }
        self.advisories.append(advisory)
        return advisory

    def _affecting(self, name: str, version: str) -> list[dict]:
        from skillctl.format.versions import matches

        return [
            a
            for a in self.advisories
            if a["affected"][0]["package"]["name"] == name
            and not a.get("withdrawn")
            and matches(a["database_specific"]["affected_range"], version)
        ]

    def _clean(self, name: str, version: str) -> bool:
        entry = self.skills[name][version]
        bad = entry["yanked"] or entry.get("deprecated") or entry.get("scan_verdict") in ("warn", "malicious")
        return not (bad or entry.get("test_result") in ("failed", "error") or self._affecting(name, version))

    def _audit_result(self, name: str, version: str, spec: str = "") -> dict:
        from skillctl.format.versions import matches, sort_key

        entry = self.skills.get(name, {}).get(version)
        if entry is None:
            return {"name": name, "version": version, "found": False}
        clean = sorted((v for v in self.skills[name] if self._clean(name, v)), key=sort_key)
        return {
            "name": name,
            "version": version,
            "found": True,
            "scan_verdict": entry.get("scan_verdict") or "",
            "scan_findings": [],
            "test_result": entry.get("test_result") or "",
            "test_summary": _last_line(entry.get("test_log") or ""),
            "yanked": entry["yanked"],
            "yanked_reason": entry["yanked_reason"],
            "deprecated": entry.get("deprecated") or "",
            "advisories": self._affecting(name, version),
            "latest_clean": clean[-1] if clean else None,
            **({"latest_clean_in_range": next((v for v in reversed(clean) if matches(spec, v)), None)} if spec else {}),
        }

    def _detail(self, name: str) -> dict:
        versions = [
            {k: v for k, v in e.items() if k not in ("data", "routing_manifest", "test_log")}
            for e in self.skills[name].values()
        ]
        if self.lists_routing_manifests:
            for listed, entry in zip(versions, self.skills[name].values(), strict=True):
                listed["has_routing_manifest"] = entry["routing_manifest"] is not None
        return {"name": name, "versions": versions, "dist_tags": {}}

    def _handler(self):
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):  # noqa: N802
                path = unquote(urlparse(self.path).path)
                registry.requests.append(path)
                parts = path.strip("/").split("/")
                if parts == ["api", "v1", "routing-manifests"] and registry.batches_manifests:
                    return self._manifests(parse_qs(urlparse(self.path).query).get("v", []))
                if parts[:3] != ["api", "v1", "skills"] or len(parts) < 4 or parts[3] not in registry.skills:
                    return self._json(404, {"detail": "not found"})
                name = parts[3]
                if len(parts) == 4:
                    return self._json(200, registry._detail(name))
                if parts[4:] == ["advisories"] and registry.audits:
                    mine = [a for a in registry.advisories if a["affected"][0]["package"]["name"] == name]
                    return self._json(200, {"advisories": mine})
                if parts[4:] == ["download"] and registry.resolves_downloads:
                    return self._resolved_download(name, parse_qs(urlparse(self.path).query).get("version", [""])[0])
                entry = registry.skills[name].get(parts[5]) if len(parts) >= 6 else None
                if entry is None:
                    return self._json(404, {"detail": "no such version"})
                if len(parts) == 6:
                    body = {k: v for k, v in entry.items() if k not in ("data", "test_log")}
                    body["checks"] = {"tests": {"status": "done", "log": entry.get("test_log") or ""}}
                    return self._json(200, body)
                data = registry.served.get((name, entry["version"]), entry["data"])
                self.send_response(200)
                self.send_header("Content-Type", "application/zip")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _resolved_download(self, name: str, spec: str):
                from skillctl.format.versions import resolve

                entries = registry.skills[name]
                version = resolve(spec, [{"version": v, "yanked": e["yanked"]} for v, e in entries.items()])
                if version is None:
                    return self._json(404, {"detail": "no such version"})
                entry = entries[version]
                if entry.get("scan_verdict") == "malicious":
                    return self._json(403, {"detail": "found malicious", "code": "scan.blocked"})
                data = registry.served.get((name, version), entry["data"])
                conditional = f'"{entry["sha256"]}"' in self.headers.get("If-None-Match", "")
                if conditional:
                    registry.not_modified.append(name)
                self.send_response(304 if conditional else 200)
                if not conditional:
                    self.send_header("Content-Type", "application/zip")
                    self.send_header("Content-Length", str(len(data)))
                self.send_header("X-Skill-Version", version)
                self.send_header("X-Checksum-Sha256", entry["sha256"])
                self.send_header("X-Skill-Scan-Verdict", entry.get("scan_verdict") or "pending")
                self.send_header("X-Skill-Routing-Manifest", "no" if entry["routing_manifest"] is None else "yes")
                if entry.get("deprecated"):
                    self.send_header("X-Skill-Deprecated", entry["deprecated"])
                self.send_header("X-Skill-Test-Result", entry.get("test_result") or "pending")
                self.end_headers()
                if not conditional:
                    self.wfile.write(data)

            def do_POST(self):  # noqa: N802
                path = unquote(urlparse(self.path).path)
                registry.requests.append("POST " + path)
                parts = path.strip("/").split("/")
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                if not registry.audits:
                    return self._json(404, {"detail": "not found"})
                if parts == ["api", "v1", "audit"]:
                    registry.audit_bodies.append(body)
                    results = [
                        registry._audit_result(s["name"], s["version"], s.get("range", "")) for s in body["skills"]
                    ]
                    return self._json(200, {"as_of": registry.as_of, "results": results})
                if parts[:3] == ["api", "v1", "skills"] and parts[4:] == ["advisories"]:
                    advisory = registry.file_advisory(parts[3], body["affected"], summary=body["summary"])
                    advisory["database_specific"]["severity"] = body["severity"]
                    advisory["details"] = body.get("details", "")
                    return self._json(201, advisory)
                if parts[:3] == ["api", "v1", "advisories"] and parts[4:] == ["withdraw"]:
                    for advisory in registry.advisories:
                        if advisory["id"] == parts[3]:
                            advisory["withdrawn"] = registry.as_of
                            return self._json(200, advisory)
                return self._json(404, {"detail": "not found", "errors": [{"code": "advisory.not_found"}]})

            def _manifests(self, specs: list[str]):
                found = []
                for spec in specs:
                    name, _, version = spec.partition("@")
                    if entry := registry.skills.get(name, {}).get(version):
                        found.append({"name": name, "version": version, "routing_manifest": entry["routing_manifest"]})
                return self._json(200, {"manifests": found})

            def _json(self, status: int, body: dict):
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        return Handler


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""
