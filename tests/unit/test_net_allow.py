"""The network allow-list's inputs: HOST:PORT targets, flags, params, a model agent's endpoint."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.builders import BuiltProject

from flightdeck.arms import net_allow
from flightdeck.arms.harness_needs import harness_needs, widened
from flightdeck.arms.net_allow import Target, parse_target, parse_targets
from flightdeck.arms.runner import RunConfig
from flightdeck.cli import cli


@pytest.mark.parametrize(
    ("text", "target"),
    [
        pytest.param("api.openai.com:443", Target("api.openai.com", 443), id="name"),
        pytest.param("API.OpenAI.com:443", Target("api.openai.com", 443), id="name-case"),
        pytest.param("127.0.0.1:8000", Target("127.0.0.1", 8000), id="loopback"),
        pytest.param("10.0.0.5:8000", Target("10.0.0.5", 8000), id="ipv4"),
        pytest.param("[::1]:8000", Target("::1", 8000), id="ipv6-loopback"),
        pytest.param("localhost:11434", Target("localhost", 11434), id="localhost"),
        pytest.param("vm:1", Target("vm", 1), id="one-label"),
        pytest.param("h:65535", Target("h", 65535), id="top-port"),
    ],
)
def test_a_target_is_parsed(text: str, target: Target) -> None:
    assert parse_target(text) == target


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("api.openai.com", "has no port", id="no-port"),
        pytest.param("api.openai.com:", "the port '' is not a number", id="empty-port"),
        pytest.param("api.openai.com:0", "the port '0' is not a number", id="port-0"),
        pytest.param("api.openai.com:65536", "the port '65536'", id="port-high"),
        pytest.param("api.openai.com:44a", "the port '44a'", id="port-letters"),
        pytest.param("api.openai.com:٤٤٣", "the port '٤٤٣'", id="port-arabic-digits"),
        pytest.param(":443", "has no port", id="no-host"),
        pytest.param("api openai.com:443", "is not a host name", id="space"),
        pytest.param("api_openai.com:443", "is not a host name", id="underscore"),
        pytest.param("-api.com:443", "is not a host name", id="leading-dash"),
        pytest.param("api..com:443", "is not a host name", id="empty-label"),
        pytest.param("api.com.:443", "is not a host name", id="trailing-dot"),
        pytest.param("*.openai.com:443", "wildcards are not supported", id="wildcard"),
        pytest.param("1.2.3.999:80", "is not an IP address", id="bad-ipv4"),
        pytest.param("127.1:80", "is not an IP address", id="short-ipv4"),
        pytest.param("0.0.0.0:80", "is not one host", id="unspecified"),
        pytest.param("224.0.0.1:80", "is not one host", id="multicast"),
        pytest.param("::1:80", "write an IPv6 address in brackets", id="v6-unbracketed"),
        pytest.param("[2001:db8::1]:443", "non-loopback IPv6 address", id="v6-global"),
        pytest.param("[::1]", r"is not \[IPV6\]:PORT", id="v6-no-port"),
        pytest.param("https://api.openai.com:443", "is a URL or a path", id="url"),
        pytest.param("", "is not HOST:PORT", id="empty"),
    ],
)
def test_a_typo_in_a_target_is_an_error_that_says_how_to_fix_it(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_target(text)


def test_targets_are_sorted_and_unique_and_two_that_listen_alike_are_refused() -> None:
    assert parse_targets(["b.com:1", "a.com:2", "B.com:1"]) == (
        Target("a.com", 2),
        Target("b.com", 1),
    )
    with pytest.raises(ValueError, match="127.0.0.1:80 and localhost:80 are the same address"):
        parse_targets(["localhost:80", "127.0.0.1:80"])


def test_each_host_name_gets_a_loopback_address_and_a_hosts_line() -> None:
    targets = parse_targets(["b.example:443", "a.example:443", "a.example:8443", "127.1.0.1:9"])
    assert net_allow.name_addresses(targets) == {"a.example": "127.1.0.1", "b.example": "127.1.0.2"}
    with pytest.raises(ValueError, match="127.1.0.1:9 and a.example:9"):
        parse_targets(["a.example:9", "127.1.0.1:9"])  # the operator's own address wins nothing
    assert net_allow.hosts_file(targets) == (
        "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n"
        "127.1.0.1 a.example\n127.1.0.2 b.example\n"
    )


def test_nsswitch_keeps_the_host_s_lines_but_resolves_names_from_files_only(
    tmp_path: Path,
) -> None:
    host = tmp_path / "nsswitch.conf"
    host.write_text("passwd: files systemd\nhosts:  files mdns4_minimal [NOTFOUND=return] dns\n")
    assert net_allow.nsswitch_file(host) == "passwd: files systemd\nhosts: files\n"
    assert (
        net_allow.nsswitch_file(tmp_path / "none") == "passwd: files\ngroup: files\nhosts: files\n"
    )


def run_args(project: BuiltProject, *extra: str) -> list[str]:
    return ["experiment", "run", str(project.suite), "--arm", "arm1", "--harness", "true", *extra]


@pytest.mark.parametrize(
    ("extra", "line"),
    [
        pytest.param(
            ["--network", "--network-allow", "127.0.0.1:80"],
            "error: --network-allow: --network/--no-network and --network-allow cannot be used "
            "together; --network shares the whole host network, --network-allow only the "
            "targets named\n",
            id="with-network",
        ),
        pytest.param(
            ["--network-allow", "api.openai.com"],
            "error: --network-allow: 'api.openai.com' has no port; give HOST:PORT, e.g. "
            "api.openai.com:443, 127.0.0.1:8000 or [::1]:8000 (a host name, an IPv4 address "
            "or a loopback IPv6 address; a port from 1 to 65535)\n",
            id="typo",
        ),
        pytest.param(
            ["--network-allow", "127.0.0.1:80", "--sandbox", "none"],
            "error: --network-allow: an allow-list needs the bubblewrap sandbox (--sandbox "
            "bwrap); without a sandbox the harness reaches the whole network\n",
            id="no-sandbox",
        ),
    ],
)
def test_a_bad_allow_list_flag_is_one_line_exit_2(
    runner: CliRunner, project: BuiltProject, extra: list[str], line: str
) -> None:
    result = runner.invoke(cli, run_args(project, *extra))
    assert result.exit_code == 2, result.output
    assert [x for x in result.stderr.splitlines(keepends=True) if x.startswith("error")] == [line]
    assert "Traceback" not in result.output
    assert not (project.suite / "answers").exists()  # refused before any trial


@pytest.mark.parametrize(
    ("appended", "offset", "message"),
    [
        pytest.param(
            "harness_sandbox:\n  arm1:\n    network_allow:\n"
            "      - 127.0.0.1:8000\n      - api.openai.com:44 3\n",
            4,
            "harness_sandbox.arm1.network_allow: 'api.openai.com:44 3': the port '44 3' is not "
            "a number from 1 to 65535",
            id="typo-names-its-own-line",
        ),
        pytest.param(
            "harness_sandbox:\n  arm1:\n    network_allow:\n      # was api.openai.com:44 3\n"
            "      - 127.0.0.1:8000\n      - api.openai.com:44 3\n",
            5,
            "harness_sandbox.arm1.network_allow: 'api.openai.com:44 3': the port '44 3' is not "
            "a number from 1 to 65535",
            id="its-line-not-a-comment-that-quotes-it",
        ),
        pytest.param(
            "harness_sandbox:\n  arm1:\n    network_allow: [127.0.0.1:8000,\n"
            "      127.0.0.1:8000, api.openai.com:44 3]\n",
            3,
            "harness_sandbox.arm1.network_allow: 'api.openai.com:44 3': the port '44 3' is not "
            "a number from 1 to 65535",
            id="a-flow-list-item-on-its-line",
        ),
        pytest.param(
            "harness_sandbox:\n  arm1:\n    network_allow: [127.0.0.1:8000]\n    network: true\n",
            3,
            "harness_sandbox.arm1: network and network_allow cannot both be set; network: true "
            "shares the whole host network, network_allow only the targets named",
            id="with-network-on-the-network-line",
        ),
    ],
)
def test_a_bad_params_network_allow_is_refused_on_its_own_line(
    runner: CliRunner, project: BuiltProject, appended: str, offset: int, message: str
) -> None:
    first = len((project.root / "params.yaml").read_text().splitlines()) + 1
    with (project.root / "params.yaml").open("a") as params:
        params.write(appended)
    result = runner.invoke(cli, run_args(project))
    assert result.exit_code == 2, result.output
    assert result.stderr == f"error: params.yaml:{first + offset}: {message}\n"


AGENT = ["python", "-m", "flightdeck", "experiment", "agent", "llm", "--model"]
_CLEAN = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"]


@pytest.mark.parametrize(
    ("model", "environ", "endpoint"),
    [
        pytest.param("anthropic/claude-x", {}, ("api.anthropic.com:443",), id="anthropic"),
        pytest.param("openai/gpt-x", {}, ("api.openai.com:443",), id="openai"),
        pytest.param(
            "openai/gpt-x",
            {"OPENAI_BASE_URL": "http://10.1.2.3:8080/v1"},
            ("10.1.2.3:8080",),
            id="openai-base-url",
        ),
        pytest.param(
            "openai-api/local/m",
            {"LOCAL_BASE_URL": "http://127.0.0.1:9000/v1"},
            ("127.0.0.1:9000",),
            id="compatible",
        ),
        pytest.param(
            "openai-api/local/m",
            {"LOCAL_BASE_URL": "https://Models.Example.com/v1"},
            ("models.example.com:443",),
            id="compatible-https-default-port",
        ),
        pytest.param(
            "anthropic/claude-x",
            {"INSPECT_EVAL_MODEL_BASE_URL": "http://[::1]:7000"},
            ("[::1]:7000",),
            id="inspect-base-url",
        ),
        pytest.param("ollama/llama3", {}, ("localhost:11434",), id="ollama-default"),
        pytest.param("openai/azure/gpt-x", {}, None, id="sub-service"),
        pytest.param("anthropic/vertex/claude-x", {}, None, id="vertex"),
        pytest.param("google/gemini-x", {}, None, id="many-hosts"),
        pytest.param("openai-api/local/m", {}, None, id="compatible-no-url"),
        pytest.param("openai/gpt-x", {"OPENAI_BASE_URL": "ftp://x.example/"}, None, id="not-http"),
        pytest.param("openai/gpt-x", {"HTTPS_PROXY": "http://proxy:3128"}, None, id="proxy"),
        pytest.param("mockllm/model", {}, None, id="dry-run-needs-none"),
    ],
)
def test_a_model_agent_s_endpoint_is_its_base_url_or_its_provider_s_one_server(
    model: str,
    environ: dict[str, str],
    endpoint: tuple[str, ...] | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    needs = harness_needs([*AGENT, model])
    assert needs is not None
    assert needs.endpoint(environ) == endpoint
    for name in _CLEAN:
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    config = widened(RunConfig(Path("s"), "a", "c"), needs)
    if endpoint is not None:
        assert (config.network, config.network_allow) == (False, endpoint)
    else:
        assert (config.network, config.network_allow) == (needs.network, ())


@pytest.mark.parametrize(
    ("network", "allow", "expected"),
    [
        pytest.param(True, (), (True, ()), id="whole-network"),
        pytest.param(False, (), (False, ()), id="closed"),
        pytest.param(None, ("127.0.0.1:1",), (False, ("127.0.0.1:1",)), id="own-list"),
        pytest.param(None, (), (True, ()), id="unconfined"),
    ],
)
def test_the_operator_s_network_choice_overrides_the_endpoint(
    network: bool | None, allow: tuple[str, ...], expected: tuple[bool, tuple[str, ...]]
) -> None:
    needs = harness_needs([*AGENT, "anthropic/claude-x"])
    mode = "none" if expected == (True, ()) and network is None else "bwrap"
    config = RunConfig(Path("s"), "a", "c", sandbox=mode, network=network, network_allow=allow)
    got = widened(config, needs)
    assert (got.network, got.network_allow) == expected
