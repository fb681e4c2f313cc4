"""deploy/: the compose file and the nginx config say what the multi-copy deployment needs (no Docker here).

The browser run of the same nginx.conf is tests/e2e/test_many_copies.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
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


class CopyClosingReusedConnections:
    """A stand-in copy on 127.0.0.1 that answers the first request of each connection and closes the connection
    when a second request arrives on it: what a Streamlit copy (uvicorn, keep-alive timeout 5 s) does when nginx
    reuses an idle connection just as uvicorn's timer closes it. Each answer names the copy (X-Copy)."""

    def __init__(self) -> None:
        import socket
        import threading

        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.reused = 0
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        import threading

        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self.handle, args=(connection,), daemon=True).start()

    def handle(self, connection) -> None:
        with connection:
            data, answered = b"", 0
            while True:
                chunk = connection.recv(65536)
                if not chunk:
                    return
                data += chunk
                while b"\r\n\r\n" in data:
                    _, data = data.split(b"\r\n\r\n", 1)
                    if answered:
                        self.reused += 1
                        return  # closed as the reused request arrives: nginx reads no response header
                    answered += 1
                    body = b"ok"
                    head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\nX-Copy: {self.port}\r\n\r\n"
                    connection.sendall(head.encode() + body)


def test_a_learner_stays_on_its_copy_when_a_copy_closes_an_idle_connection(tmp_path):
    """nginx must not send a learner's request to another copy when the learner's own copy merely closed an idle
    keep-alive connection. With `keepalive N` in the upstream, nginx reuses connections that uvicorn closes after
    5 s idle; the request then fails with an error, `proxy_next_upstream error` sends it (page, health ping or
    websocket) to the next copy of the hash ring, where the learner's session is not, and the failure counts
    toward max_fails, so a healthy copy is skipped for fail_timeout (issue 25's 30-learner run: a page from one
    copy, its websocket to another)."""
    import shutil
    import urllib.request

    from deploy import many_copies
    from tests.e2e.conftest import REQUIRE

    if not shutil.which(many_copies.NGINX):
        if REQUIRE:
            pytest.fail(f"ATTENTION_LAB_REQUIRE_BROWSER=1 but no nginx at {many_copies.NGINX} (apt-get install nginx)")
        pytest.skip(f"no nginx at {many_copies.NGINX} (apt-get install nginx)")
    copies = [CopyClosingReusedConnections() for _ in range(3)]
    listen = many_copies.free_port()
    nginx = many_copies.start_nginx([copy.port for copy in copies], listen, tmp_path)
    try:
        for route in ("learner-1", "learner-2", "learner-3"):
            answered_by = []
            for _ in range(6):
                request = urllib.request.Request(
                    f"http://127.0.0.1:{listen}/_stcore/health", headers={"Cookie": f"lab_route={route}"}
                )
                with urllib.request.urlopen(request, timeout=10) as response:
                    answered_by.append((response.headers["X-Upstream"], response.headers["X-Copy"]))
            assert len(set(answered_by)) == 1 and "," not in answered_by[0][0], (route, answered_by)
    finally:
        many_copies.stop(nginx)
        for copy in copies:
            copy.server.close()
