"""Plugins: the review shows all a plugin adds and adds nothing; install adds exactly the reviewed
copy; its rules only make the gatekeeper stricter and rank below the user's; its servers start
only when turned on; uninstall takes away all it added and nothing of the user's."""

from __future__ import annotations

import json
import shutil

import pytest

from host.gatekeeper.service import CheckRequest, Gatekeeper
from host.plugins.installer import Plugins
from host.skills.errors import SkillError
from host.skills.library import SkillLibrary
from host.skills.sources import Source
from host.store import Store
from tests.skills.builders import SAMPLE_PLUGIN, write_plugin, write_skill, zip_of

SHOP = "https://checkout.shop.example"
MANIFEST = {
    "name": "shop-kit", "version": "2.1.0", "description": "Shopping helpers", "author": {"name": "Ana"},
    "homepage": "https://example.org/shop-kit",
    "mcpServers": {"prices": {"type": "http", "url": "http://127.0.0.1:9/mcp", "tools": ["lookup"]}},
    "tabwarden": {"rules": [{"tool": "click", "origin": "*.shop.example", "verdict": "ask"},
                            {"tool": "navigate", "origin": "*.casino.example", "verdict": "deny"}],
                  "guarded": ["*.bnpl.example"], "blocked": ["tracker.example"]},
    "commands": ["ignored/by/us"],
}


@pytest.fixture
def env(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    gk = Gatekeeper(store, user_policy=tmp_path / "user.json", managed_policy=tmp_path / "managed.json")
    gk.bind_browser_session("b")
    library = SkillLibrary(store, tmp_path / "extensions")
    user_servers: set[str] = set()
    plugins = Plugins(library, gk, user_servers=lambda: user_servers)
    yield gk, library, plugins, user_servers, tmp_path
    store.close()


def check(gk, tool="click", origin=SHOP, **kw):
    return gk.check(CheckRequest(thread_id="t1", tool=tool, params=kw.pop("params", {"ref": "s1"}), origin=origin,
                                 policy="auto", **kw))


def refused(call, *args, **kw) -> SkillError:
    with pytest.raises(SkillError) as caught:
        call(*args, **kw)
    return caught.value


def kit(tmp_path, manifest=None, **kw):
    return write_plugin(tmp_path / "src" / "shop-kit", manifest or MANIFEST,
                        skills=kw.pop("skills", {"cart-check": "Check a cart", "coupon-hunt": "Find coupons"}), **kw)


def test_the_review_lists_everything_and_adds_nothing(env):
    gk, library, plugins, _, tmp_path = env
    review = plugins.review(Source(path=str(kit(tmp_path))))
    m = review.manifest
    assert (m.name, m.version, m.author, m.homepage) == ("shop-kit", "2.1.0", "Ana", "https://example.org/shop-kit")
    assert [b.doc.name for b in review.skills] == ["cart-check", "coupon-hunt"]
    assert m.servers == {"prices": {"url": "http://127.0.0.1:9/mcp", "tools": ["lookup"], "enabled": False}}
    assert m.rules == ({"tool": "click", "origin": "*.shop.example", "verdict": "ask"},
                       {"tool": "navigate", "origin": "*.casino.example", "verdict": "deny"})
    assert (m.guarded, m.blocked, m.ignored) == (("*.bnpl.example",), ("tracker.example",), ("commands",))
    assert library.storage.skills() == [] and plugins.storage.plugins() == []
    assert check(gk).verdict == "allow"  # nothing in force yet


def test_install_puts_exactly_the_reviewed_copy_in_force_and_uninstall_takes_it_all(env):
    gk, library, plugins, _, tmp_path = env
    gk.add_origin_pattern("tracker.example")  # the user's own entry, the same as the plugin's
    library.install(Source(path=str(write_skill(tmp_path / "mine", "my-notes"))))
    review = plugins.review(Source(path=str(kit(tmp_path))))
    plugins.install(review.id, review.content_hash)
    assert sorted(r.name for r in library.usable()) == ["cart-check", "coupon-hunt", "my-notes"]
    assert {s.plugin for s in library.storage.skills()} == {"shop-kit", None}
    assert check(gk).code == "rule_ask"
    assert check(gk, "navigate", params={"url": "https://www.casino.example/"}).code == "rule_deny"
    assert check(gk, origin="https://pay.bnpl.example").code == "guarded_origin"
    assert check(gk, "read_page", origin="https://tracker.example", params={}).code == "sensitive_origin"
    assert plugins.servers()["prices"].enabled is False  # off until the user turns it on

    plugins.remove("shop-kit")
    assert [r.name for r in library.usable()] == ["my-notes"]
    assert not (library.root / "plugins" / "shop-kit").exists()
    assert check(gk).verdict == "allow" and check(gk, origin="https://pay.bnpl.example").verdict == "allow"
    # The user's own blocked entry stays: uninstall removes only what the plugin added.
    assert check(gk, "read_page", origin="https://tracker.example", params={}).code == "sensitive_origin"
    assert plugins.servers() == {}


def test_plugin_rules_rank_below_every_rule_of_the_users(env):
    gk, _, plugins, _, tmp_path = env
    manifest = {"name": "strict", "tabwarden": {"rules": [
        {"tool": "click", "origin": SHOP, "verdict": "deny"},  # as specific as a rule gets
        {"tool": "type", "origin": "*", "verdict": "ask"}]}}
    review = plugins.review(Source(path=str(write_plugin(tmp_path / "strict", manifest))))
    plugins.install(review.id, review.content_hash)
    assert check(gk).code == "rule_deny"
    gk.add_rule({"tool": "*", "origin": "*.shop.example", "verdict": "allow"})  # broad, but the user's
    assert check(gk).code == "rule_allow"
    assert check(gk, "type", params={"ref": "s1", "text": "hello"}).code == "rule_allow"
    assert check(gk, "type", origin="https://elsewhere.example", params={"ref": "s1", "text": "x"}).code == "rule_ask"


def test_a_plugin_can_neither_allow_nor_open_a_blocked_site(env):
    gk, _, plugins, _, tmp_path = env
    loose = {"name": "loose", "tabwarden": {"rules": [{"tool": "*", "origin": "*", "verdict": "allow"}]}}
    error = refused(plugins.review, Source(path=str(write_plugin(tmp_path / "loose", loose))))
    assert error.code == "invalid_manifest" and error.where.endswith("$.tabwarden.rules[0].verdict")
    from host.gatekeeper.errors import InvalidInput

    with pytest.raises(InvalidInput):  # nor through the gatekeeper's own door
        gk.inject_rules("plugin:loose", [{"tool": "*", "origin": "*", "verdict": "allow"}])
    assert check(gk, "navigate", params={"url": "chrome://settings"}).verdict == "deny"


@pytest.mark.parametrize("manifest,files,code,where", [
    ({"name": "x", "skills": ["skills/missing"]}, {}, "missing_file", "$.skills[0]"),
    ({"name": "x", "mcpServers": "./servers.json"}, {}, "missing_file", "$.mcpServers"),
    ({"name": "x", "skills": ["../outside"]}, {}, "invalid_manifest", "$.skills[0]"),
    ({"name": "Bad Name"}, {}, "invalid_manifest", "$.name"),
    ({"version": "1"}, {}, "invalid_manifest", "$.name"),
    ({"name": "x", "mcpServers": {"fs": {"command": "npx", "args": ["server"]}}}, {}, "invalid_manifest", "fs"),
    ({"name": "x", "mcpServers": {"h": {"url": "ftp://x"}}}, {}, "invalid_manifest", "h.url"),
    ({"name": "x", "mcpServers": {"h": {"url": "https://x.example/mcp", "headers": {"Authorization": "t"}}}}, {},
     "invalid_manifest", "h.headers"),
    ({"name": "x", "tabwarden": {"rules": [{"tool": "clik", "origin": "*", "verdict": "ask"}]}}, {},
     "invalid_manifest", "rules[0].tool"),
    ({"name": "x", "tabwarden": {"guarded": ["http://"]}}, {}, "invalid_manifest", "guarded[0]"),
    ({"name": "x", "tabwarden": {"rulez": []}}, {}, "invalid_manifest", "rulez"),
])
def test_a_bad_manifest_is_refused_naming_its_field(env, manifest, files, code, where):
    _, library, plugins, _, tmp_path = env
    error = refused(plugins.review, Source(path=str(write_plugin(tmp_path / "p", manifest, files=files))))
    assert error.code == code and where in (error.where or ""), error
    assert plugins.storage.plugins() == [] and not (library.root / "plugins").exists()


def test_malformed_json_and_a_missing_manifest(env):
    _, _, plugins, _, tmp_path = env
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "plugin.json").write_text("{name: 'x'")
    assert refused(plugins.review, Source(path=str(folder))).code == "invalid_manifest"
    (folder / "plugin.json").unlink()
    assert refused(plugins.review, Source(path=str(folder))).code == "not_a_plugin"


def test_clashes_with_the_users_server_or_skill_are_refused(env):
    _, library, plugins, user_servers, tmp_path = env
    user_servers.add("prices")
    error = refused(plugins.review, Source(path=str(kit(tmp_path))))
    assert error.code == "server_exists" and "mcp.json" in error.message
    user_servers.clear()
    library.install(Source(path=str(write_skill(tmp_path / "mine", "cart-check"))))
    error = refused(plugins.review, Source(path=str(kit(tmp_path))))
    assert error.code == "skill_exists" and "by you" in error.message


def test_servers_start_only_when_turned_on(env):
    _, _, plugins, _, tmp_path = env
    told = []
    plugins.on_servers = lambda: told.append(1)
    review = plugins.review(Source(path=str(kit(tmp_path))))
    plugins.install(review.id, review.content_hash)
    assert plugins.servers()["prices"].enabled is False
    plugins.set_server_enabled("shop-kit", "prices", True)
    server = plugins.servers()["prices"]
    assert (server.enabled, server.url, server.tools) == (True, "http://127.0.0.1:9/mcp", ("lookup",))
    assert told and refused(plugins.set_server_enabled, "shop-kit", "nope", True).code == "plugin_not_found"


def test_install_refuses_a_copy_other_than_the_reviewed_one(env):
    _, _, plugins, _, tmp_path = env
    review = plugins.review(Source(path=str(kit(tmp_path))))
    assert refused(plugins.install, review.id, "0" * 64).code == "hash_mismatch"
    assert refused(plugins.install, review.id, review.content_hash).code == "review_not_found"  # used up
    review = plugins.review(Source(path=str(kit(tmp_path))))
    (review.folder / "skills" / "cart-check" / "SKILL.md").write_text("---\nname: cart-check\ndescription: x\n---\nEvil")
    assert refused(plugins.install, review.id, review.content_hash).code == "hash_mismatch"
    assert plugins.storage.plugins() == []


def test_an_update_replaces_the_plugins_additions_and_keeps_the_users_switches(env):
    gk, library, plugins, _, tmp_path = env
    review = plugins.review(Source(path=str(kit(tmp_path))))
    plugins.install(review.id, review.content_hash)
    plugins.set_server_enabled("shop-kit", "prices", True)
    library.set_enabled("coupon-hunt", False)
    newer = {**MANIFEST, "version": "3.0.0", "tabwarden": {"rules": [], "guarded": ["*.bnpl.example"]}}
    source = tmp_path / "v3"
    shutil.copytree(kit(tmp_path), source)
    (source / "plugin.json").write_text(json.dumps(newer))
    review = plugins.review(Source(path=str(source)))
    assert review.replaces == "2.1.0"
    plugins.install(review.id, review.content_hash)
    assert check(gk).verdict == "allow"  # the old ask rule is gone
    assert plugins.servers()["prices"].enabled is True
    assert library.get("coupon-hunt").enabled is False


def test_a_plugins_rules_come_back_with_the_host(env):
    gk, library, plugins, _, tmp_path = env
    review = plugins.review(Source(path=str(kit(tmp_path))))
    plugins.install(review.id, review.content_hash)
    fresh = Gatekeeper(library.storage.db, user_policy=tmp_path / "user.json", managed_policy=tmp_path / "managed.json")
    fresh.bind_browser_session("b")
    assert check(fresh).verdict == "allow"
    assert Plugins(library, fresh).apply() == []
    assert check(fresh).code == "rule_ask"


def test_the_sample_plugin_installs_from_a_zip(env):
    gk, library, plugins, _, tmp_path = env
    review = plugins.review(Source(data=zip_of(SAMPLE_PLUGIN, prefix="careful-shopper/"), name="careful-shopper.zip"))
    assert [b.doc.name for b in review.skills] == ["checkout-review"]
    assert [r["tool"] for r in review.manifest.rules] == ["effect:pay", "click"]
    plugins.install(review.id, review.content_hash)
    assert check(gk, origin="https://www.klarna.com").code == "guarded_origin"
    assert check(gk, params={"ref": "s1"}, target={"role": "button", "name": "Start your free trial"}).code == "rule_ask"
    assert check(gk, params={"ref": "s1"}, target={"role": "button", "name": "Add to cart"}).verdict == "allow"
