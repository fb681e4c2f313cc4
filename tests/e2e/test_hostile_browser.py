"""Nothing the lab draws makes the learner's browser ask an address off the app's own host.

Every page is opened plain and with hostile values in its link (a sentence and a query that are Markdown and HTML
images, a seed and an example quoted back in an error or a note). Chromium reports every request it starts
(``page.on("request")``), so an image drawn from the learner's text, a LaTeX \\includegraphics or a favicon fetched
from fonts.gstatic.com fails the test, even though the request never gets an answer on this closed network.
"""

from __future__ import annotations

from urllib.parse import urlencode, urlsplit

import pytest

from tests import hostile_corpus as corpus
from tests.e2e.conftest import wait_for_app
from ui import registry

PAGES = ["" if lesson.default else lesson.name for lesson in registry.LESSONS]
OWN = "Your own sentence"
SENTENCE = " ".join(corpus.SENTENCES[name] for name in corpus.FETCHING)
LINKS = {
    "plain": {},
    "hostile sentence and query": {
        "example": OWN,
        "sentence": SENTENCE,
        "embedding": "Random (seeded)",
        "query": "![](//203.0.113.9/a.png)",
    },
    "hostile seed and example": {
        "example": OWN,
        "sentence": "a b c",
        "embedding": "Random (seeded)",
        "seed": "![](//203.0.113.9/h.png)",
    },
}
LOCAL_HOSTS = {"127.0.0.1", "localhost"}


def outside_requests(page, url: str) -> list[str]:
    """Open ``url``, wait until the page is drawn, and return every request that left the app's host."""
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.goto(url)
    wait_for_app(page)
    page.wait_for_timeout(500)  # images and fonts start loading once drawn
    return [
        address for address in asked if urlsplit(address).scheme in ("http", "https", "ws", "wss")
        and urlsplit(address).hostname not in LOCAL_HOSTS
    ]  # fmt: skip


# Every page with the hostile sentence and query (what the pages draw from the learner's text); the plain link and
# the hostile seed on two pages only: the favicon and the sidebar's error are the same on every page.
CASES = [(path, "hostile sentence and query") for path in PAGES] + [
    (path, name) for path in ("", "scores") for name in ("plain", "hostile seed and example")
]


@pytest.mark.browser
@pytest.mark.parametrize(("path", "name"), CASES, ids=[f"{path or 'overview'}-{name}" for path, name in CASES])
def test_no_page_asks_an_outside_address_even_with_hostile_links(page, app_url, path, name):
    params = LINKS[name]
    query = f"?{urlencode(params)}" if params else ""
    asked = outside_requests(page, f"{app_url}/{path}{query}")
    assert not asked, f"{path} with the {name} link asked {asked}"


def test_the_hostile_link_holds_every_value_that_would_fetch():
    for name in corpus.FETCHING:
        assert corpus.OUTSIDE_HOST in corpus.SENTENCES[name] and corpus.SENTENCES[name] in SENTENCE
