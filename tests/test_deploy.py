"""deploy/: the compose file and the nginx config say what the multi-copy deployment needs (no Docker here).

The browser run of the same nginx.conf is tests/e2e/test_many_copies.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
CONF = (DEPLOY / "nginx.conf").read_text(encoding="utf-8") if (DEPLOY / "nginx.conf").exists() else ""


def compose() -> dict:
    return yaml.safe_load((DEPLOY / "docker-compose.yml").read_text(encoding="utf-8"))


def test_compose_builds_every_copy_from_the_repository_dockerfile_and_mounts_the_nginx_conf():
    services = compose()["services"]
    apps = {name: service for name, service in services.items() if "build" in service}
    assert len(apps) >= 2
    for name, service in apps.items():
        context = (DEPLOY / service["build"]["context"]).resolve()
        assert (context / service["build"]["dockerfile"]) == ROOT / "Dockerfile", name
        assert "streamlit_app.py" in service["command"], name
        assert "/_stcore/health" in " ".join(service["healthcheck"]["test"]), name
    nginx = services["nginx"]
    assert nginx["image"].startswith("nginx")
    mounts = [volume.split(":") for volume in nginx["volumes"]]
    assert [(DEPLOY / host).resolve() for host, inside, *_ in mounts if inside == "/etc/nginx/nginx.conf"] == [
        DEPLOY / "nginx.conf"
    ]
    assert set(nginx["depends_on"]) == set(apps)


def test_compose_copies_listen_on_the_ports_of_the_nginx_upstream():
    """One nginx.conf serves the VM and the compose file: every copy's port is an upstream line, and back."""
    ports = sorted(
        int(re.search(r"--server\.port=(\d+)", " ".join(service["command"])).group(1))
        for service in compose()["services"].values()
        if "build" in service
    )
    upstream = sorted(int(port) for port in re.findall(r"^\s*server 127\.0\.0\.1:(\d+) ", CONF, flags=re.MULTILINE))
    assert ports == upstream and len(set(ports)) == len(ports)


def test_nginx_conf_pins_a_browser_to_one_copy_and_keeps_its_websocket_open():
    assert re.search(r"hash \$lab_route consistent;", CONF)
    assert re.search(r'map \$cookie_lab_route \$lab_route \{\s*""\s+\$request_id;', CONF)
    assert "add_header Set-Cookie $lab_route_cookie always;" in CONF
    assert "proxy_set_header Upgrade $http_upgrade;" in CONF
    assert "proxy_set_header Connection $connection_upgrade;" in CONF
    timeout = re.search(r"proxy_read_timeout (\d+)([smhd]);", CONF)
    seconds = int(timeout.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[timeout.group(2)]
    assert seconds >= 3600  # a learner reading for an hour keeps the session


def test_the_copies_config_renders_for_any_ports(tmp_path):
    from deploy.many_copies import render_nginx_conf

    text = render_nginx_conf([7001, 7002, 7003, 7004], 7100, tmp_path)
    assert re.findall(r"server 127\.0\.0\.1:(\d+) max_fails", text) == ["7001", "7002", "7003", "7004"]
    assert "listen 127.0.0.1:7100;" in text and "/var/log/" not in text
