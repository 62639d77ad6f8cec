"""`agentls plugin …` from the terminal with a private HOME and AGENTLS_HOME: a plugin
folder added, listed, disabled, enabled and removed; a git URL cloned with real git (a
bare repository made here, reached by file://); marketplaces listing plugins by path and
by git URL; bad manifests refused in one line with nothing half-installed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentls.commands.builtin import standard_catalog
from agentls.plugins.loaded import SessionPlugins
from plugin_fixture import bare_repo, make_marketplace, make_plugin, write
from test_cli import agentls


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home, agentls_home = tmp_path / "home", tmp_path / "agentls-home"
    home.mkdir()
    return {"HOME": str(home), "AGENTLS_HOME": str(agentls_home)}


def plugin(tmp_path: Path, env: dict[str, str], *args: str) -> tuple[int, str, str]:
    done = agentls("plugin", *args, cwd=tmp_path, **env)
    return done.returncode, done.stdout, done.stderr


def listed(tmp_path: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    code, out, err = plugin(tmp_path, env, "list", "--json")
    assert code == 0, err
    found: list[dict[str, Any]] = json.loads(out)
    return found


def test_a_folder_is_added_listed_disabled_enabled_and_removed(
    tmp_path: Path, env: dict[str, str]
) -> None:
    folder = make_plugin(tmp_path / "src" / "demo", "demo", marks=tmp_path / "marks")
    code, out, err = plugin(tmp_path, env, "add", str(folder))
    assert code == 0 and out == f"installed demo 1.2.0 from {folder.resolve()} (enabled)\n", err
    [shown] = listed(tmp_path, env)
    assert shown == {
        "name": "demo",
        "enabled": True,
        "source": str(folder.resolve()),
        "path": str(folder.resolve()),
        "version": "1.2.0",
        "description": "demo tools",
        "commands": ["demo:greet"],
        "agents": ["demo:checker"],
        "skills": ["demo:helper"],
        "hooks": True,
    }
    _code, text, _err = plugin(tmp_path, env, "list")
    assert text.startswith("demo 1.2.0  enabled  ") and "skills: demo:helper" in text
    assert plugin(tmp_path, env, "disable", "demo")[:2] == (0, "disabled demo\n")
    assert listed(tmp_path, env)[0]["enabled"] is False
    assert plugin(tmp_path, env, "enable", "demo")[:2] == (0, "enabled demo\n")
    assert listed(tmp_path, env)[0]["enabled"] is True
    again = plugin(tmp_path, env, "add", str(folder))
    assert again[0] == 1 and "already installed" in again[2]
    assert plugin(tmp_path, env, "remove", "demo")[:2] == (0, "removed demo\n")
    assert listed(tmp_path, env) == []
    # A folder the user gave is referenced, never deleted.
    assert (folder / "commands" / "greet.md").is_file()
    unknown = plugin(tmp_path, env, "enable", "demo")
    assert unknown[0] == 1 and unknown[2] == (
        "agentls plugin: no plugin named demo (see `agentls plugin list`)\n"
    )


@pytest.mark.parametrize(
    ("manifest", "why"),
    [
        ("{not json", "not JSON"),
        ('{"name": "Bad Name"}', '"name" must be kebab-case'),
        ('{"version": "1"}', '"name" must be kebab-case'),
        ('{"name": "x", "commands": "../../etc"}', "must be a path inside the plugin"),
        ('{"name": "x", "hooks": 3}', '"hooks" must be a path to a JSON file or an object'),
        ("[]", "must be a JSON object"),
    ],
)
def test_a_bad_manifest_is_one_line_and_installs_nothing(
    tmp_path: Path, env: dict[str, str], manifest: str, why: str
) -> None:
    folder = tmp_path / "bad"
    write(folder / ".agentls-plugin" / "plugin.json", manifest)
    code, out, err = plugin(tmp_path, env, "add", str(folder))
    assert code == 1 and out == "" and err.count("\n") == 1 and why in err
    assert err.startswith(f"agentls plugin: {folder / '.agentls-plugin' / 'plugin.json'}: ")
    assert listed(tmp_path, env) == []
    not_a_plugin = plugin(tmp_path, env, "add", str(tmp_path))
    assert not_a_plugin[0] == 1 and "not a plugin" in not_a_plugin[2]


def test_a_git_url_is_cloned_into_agentls_home_and_removed_with_it(
    tmp_path: Path, env: dict[str, str]
) -> None:
    source = make_plugin(tmp_path / "src" / "gitted", "gitted")
    url = bare_repo(source, tmp_path / "gitted.git")
    code, out, err = plugin(tmp_path, env, "add", url)
    assert code == 0 and out == f"installed gitted 1.2.0 from {url} (enabled)\n", err
    clone = Path(env["AGENTLS_HOME"]) / "plugins" / "gitted"
    [shown] = listed(tmp_path, env)
    assert shown["path"] == str(clone.resolve()) and shown["source"] == url
    assert (clone / "commands" / "greet.md").is_file()
    assert plugin(tmp_path, env, "remove", "gitted")[0] == 0
    assert not clone.exists()
    # A repository that is no plugin: refused, and no clone is left behind.
    broken = tmp_path / "src" / "broken"
    write(broken / ".claude-plugin" / "plugin.json", '{"name": "NOPE"}')
    bad_url = bare_repo(broken, tmp_path / "broken.git")
    code, _out, err = plugin(tmp_path, env, "add", bad_url)
    assert code == 1 and '"name" must be kebab-case' in err and err.count("\n") == 1
    assert [p.name for p in (Path(env["AGENTLS_HOME"]) / "plugins").iterdir()] == []
    assert [p.name for p in Path(env["AGENTLS_HOME"]).iterdir() if p.name.startswith(".")] == []
    missing = plugin(tmp_path, env, "add", (tmp_path / "nowhere.git").as_uri())
    assert missing[0] == 1 and missing[2].startswith("agentls plugin: file://")


def test_a_marketplace_makes_its_plugins_installable_by_name(
    tmp_path: Path, env: dict[str, str]
) -> None:
    market = tmp_path / "market"
    make_plugin(market / "plugins" / "local-one", "local-one")
    remote = bare_repo(
        make_plugin(tmp_path / "src" / "remote-one", "remote-one"), tmp_path / "r.git"
    )
    make_marketplace(
        market,
        "team",
        [
            {"name": "local-one", "source": "./plugins/local-one", "description": "Local"},
            {"name": "remote-one", "source": {"source": "url", "url": remote}},
        ],
    )
    code, out, err = plugin(tmp_path, env, "marketplace", "add", str(market))
    assert code == 0 and out == "added marketplace team (plugins: local-one, remote-one)\n", err
    _code, shown, _err = plugin(tmp_path, env, "marketplace", "list")
    assert "  local-one@team  Local\n" in shown and "  remote-one@team\n" in shown
    assert plugin(tmp_path, env, "add", "local-one@team")[0] == 0
    assert plugin(tmp_path, env, "add", "remote-one@team")[0] == 0
    by_name = {p["name"]: p for p in listed(tmp_path, env)}
    assert by_name["local-one"]["source"] == "local-one@team"
    assert by_name["local-one"]["path"] == str((market / "plugins" / "local-one").resolve())
    assert by_name["remote-one"]["path"].startswith(env["AGENTLS_HOME"])
    missing = plugin(tmp_path, env, "add", "nope@team")
    assert missing[0] == 1 and "marketplace team lists no plugin named nope" in missing[2]
    assert plugin(tmp_path, env, "add", "x@elsewhere")[0] == 1
    # `add` on a folder with a marketplace.json (and no plugin.json) adds the marketplace.
    other = make_marketplace(tmp_path / "other", "other", [])
    assert (
        plugin(tmp_path, env, "add", str(other))[1] == "added marketplace other (plugins: none)\n"
    )
    assert plugin(tmp_path, env, "marketplace", "remove", "other")[0] == 0
    bad = make_marketplace(tmp_path / "bad", "team2", [{"name": "x", "source": "../../up"}])
    code, _out, err = plugin(tmp_path, env, "marketplace", "add", str(bad))
    assert code == 1 and "leaves the marketplace" in err and err.count("\n") == 1


def test_plain_command_names_only_without_a_clash_and_never_over_another_source(
    tmp_path: Path, env: dict[str, str]
) -> None:
    for name in ("alpha", "beta"):
        folder = make_plugin(tmp_path / "src" / name, name)
        assert plugin(tmp_path, env, "add", str(folder))[0] == 0
    write(tmp_path / "src" / "alpha" / "commands" / "solo.md", "Alpha's solo.\n")
    write(tmp_path / "src" / "alpha" / "commands" / "mine.md", "Alpha's own.\n")
    write(tmp_path / "src" / "alpha" / "commands" / "help.md", "Not the built-in.\n")
    project = tmp_path / "project"
    write(project / ".agentls" / "commands" / "solo.md", "The project's solo.\n")
    plugins = SessionPlugins.load(Path(env["AGENTLS_HOME"]))
    catalog = standard_catalog(project, tmp_path / "home", plugins=plugins.commands())
    sources = {c.name: c.source for c in catalog.listed()}
    # Both plugins have /greet: only the namespaced names.
    assert sources["alpha:greet"] == sources["beta:greet"] == "plugin" and "greet" not in sources
    assert sources["mine"] == "plugin" and sources["alpha:mine"] == "plugin"
    # Another source's command and a built-in keep their names.
    assert sources["solo"] == "project" and sources["alpha:solo"] == "plugin"
    assert sources["help"] == "builtin"
