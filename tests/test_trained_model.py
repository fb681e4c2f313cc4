"""attention_core.trained_model: all-MiniLM-L6-v2 loaded offline, every head recomputed with the lab's functions.

transformers' BertModel and AutoTokenizer on the same files are the independent reference (tests only).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
import torch

from attention_core import trained_model as tm

SENTENCES = (
    "Your journey starts with one step",
    "The bank of the river was flooded, unbelievably!",
    "I can't find the light switch 💡 in the 暗い room",
    "a",
)


@pytest.fixture(scope="module")
def trained() -> tm.TrainedModel:
    """The model, loaded once for this module (a few seconds)."""
    return tm.load_model()


@pytest.fixture(scope="module")
def reference():
    """transformers' BertModel on the same folder, eager attention: the oracle the lab's forward is checked by."""
    from transformers import BertModel

    return BertModel.from_pretrained(tm.model_folder(), local_files_only=True, attn_implementation="eager").eval()


@pytest.fixture(scope="module")
def pca(trained) -> tm.VocabularyPCA:
    """The vocabulary PCA, fitted once for this module."""
    return tm.fit_vocabulary_pca(trained.model.word_embeddings)


def test_weights_file_is_the_published_one():
    assert tm.file_sha256(tm.model_folder() / tm.WEIGHTS_FILE) == tm.WEIGHTS_SHA256


def test_loaded_model_has_the_expected_shape(trained):
    config = trained.model.config
    assert (config.num_layers, config.num_heads, config.d_model, config.d_k) == (6, 12, 384, 32)
    assert (tm.NUM_LAYERS, tm.NUM_HEADS, tm.D_MODEL, tm.D_K) == (6, 12, 384, 32)


def test_it_reproduces_the_published_similarities(trained):
    similarity, gap = tm.published_check(trained)
    assert similarity.shape == (3, 3)
    assert gap < 1e-4  # printed to 4 decimals


def test_tokeniser_pieces_of_a_known_sentence(trained):
    _, pieces, word_ids = tm.encode(trained.tokenizer, "Your journey starts with one step, unbelievably!")
    assert pieces == [
        "[CLS]", "your", "journey", "starts", "with", "one", "step", ",",
        "un", "##bel", "##ie", "##va", "##bly", "!", "[SEP]",
    ]  # fmt: skip
    assert word_ids[0] is None and word_ids[-1] is None and word_ids[8:13] == [7] * 5


@pytest.mark.parametrize("sentence", SENTENCES)
def test_every_head_recomputed_equals_output_attentions(trained, reference, sentence):
    """Each head by hand on transformers' hidden states gives transformers' output_attentions, and the lab's forward's
    context of that head."""
    ids, _, _ = tm.encode(trained.tokenizer, sentence)
    with torch.no_grad():
        output = reference(input_ids=torch.tensor([ids]), output_attentions=True, output_hidden_states=True)
    forward = tm.run_forward(trained, sentence)
    for layer in range(tm.NUM_LAYERS):
        X = output.hidden_states[layer][0]  # (T, 384)
        for head in range(tm.NUM_HEADS):
            steps = tm.head_by_hand(X, tm.head_params(trained.model, layer, head))
            torch.testing.assert_close(steps.weights, output.attentions[layer][0, head], atol=1e-5, rtol=0)
            own = forward.contexts[layer][:, head * tm.D_K : (head + 1) * tm.D_K]  # (T, 32)
            torch.testing.assert_close(steps.context, own, atol=1e-5, rtol=0)
    assert max(tm.max_differences(trained.model, forward)) < 1e-5


def test_forward_keeps_every_layers_input_weights_and_context(trained):
    """Sanity of the oracle: the shapes the page reads, and rows of weights that sum to 1."""
    forward = tm.run_forward(trained, SENTENCES[0])
    assert forward.contexts.shape == (6, len(forward.pieces), 384)
    assert forward.hidden_states.shape == (7, len(forward.pieces), 384)
    assert forward.attentions.shape == (6, 12, len(forward.pieces), len(forward.pieces))
    torch.testing.assert_close(forward.attentions.sum(-1), torch.ones(6, 12, len(forward.pieces)))


def test_head_slices_follow_the_linear_layout(trained, reference):
    params = tm.head_params(trained.model, 2, 5)
    query = reference.encoder.layer[2].attention.self.query
    assert params.W_q.shape == (384, 32) and params.b_q.shape == (32,)
    torch.testing.assert_close(params.W_q, query.weight.detach()[160:192, :].T)
    torch.testing.assert_close(params.b_q, query.bias.detach()[160:192])
    X = torch.randn(5, 384, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        expected = query(X)[:, 160:192]  # (5, 32)
    torch.testing.assert_close(tm.biased_projection(X, params.W_q, params.b_q), expected, atol=1e-5, rtol=0)


@pytest.mark.parametrize(
    ("sentence", "reason"),
    [("", "empty"), ("   ", "empty"), (" ".join(["word"] * 1000), "word pieces"), ("x" * 60_000, "characters")],
)
def test_refused_sentences_say_why(trained, sentence, reason):
    with pytest.raises(ValueError, match=reason):
        tm.encode(trained.tokenizer, sentence)


@pytest.mark.parametrize("sentence", ["🙂🙂 🚀", "Hello Привет مرحبا 你好 שלום", "e\u0301te\u0301"])
def test_odd_scripts_are_tokenised(trained, sentence):
    forward = tm.run_forward(trained, sentence)
    assert forward.pieces[0] == "[CLS]" and forward.pieces[-1] == "[SEP]" and len(forward.pieces) >= 3


def test_split_words_reports_words_in_several_pieces(trained):
    forward = tm.run_forward(trained, "the river unbelievably")
    assert tm.split_words(forward) == {2: ["un", "##bel", "##ie", "##va", "##bly"]}


# --- head labels on constructed weights ---

T = 6


def _rows_on(columns: list[int]) -> torch.Tensor:
    weights = torch.zeros(T, T)
    weights[torch.arange(T), torch.tensor(columns)] = 1.0
    return weights


@pytest.mark.parametrize(
    ("weights", "label"),
    [
        (_rows_on([0] * T), "CLS"),
        (_rows_on([T - 1] * T), "SEP"),
        (_rows_on(list(range(T))), "same"),
        (_rows_on([0, *range(T - 1)]), "previous"),
        (_rows_on([*range(1, T), T - 1]), "next"),
        (torch.full((T, T), 1 / T), "broad"),
    ],
    ids=["cls", "sep", "same", "previous", "next", "uniform"],
)
def test_head_labels(weights, label):
    assert tm.head_label(weights) == label


def test_a_split_head_is_mixed():
    weights = torch.zeros(T, T)
    weights[:, 0], weights[:, T - 1], weights[torch.arange(T), torch.arange(T)] = 0.4, 0.4, 0.2
    weights[0, 0], weights[T - 1, T - 1] = 0.6, 0.6
    assert torch.allclose(weights.sum(-1), torch.ones(T))
    assert tm.head_label(weights) == "mixed"


def test_entropy_grid_is_ln_T_for_uniform_heads():
    grid = tm.entropy_grid(torch.full((6, 12, T, T), 1 / T))
    assert grid.shape == (6, 12)
    torch.testing.assert_close(grid, torch.full((6, 12), math.log(T)))


def test_label_tables():
    labels = [["CLS"] * 12 for _ in range(6)]
    assert tm.label_frame(labels).shape == (72, 3)
    assert tm.label_counts(labels)["CLS"].tolist() == [12] * 6
    frame = tm.grid_frame(torch.rand(6, 12, 3, 3))
    assert len(frame) == 6 * 12 * 9 and frame["layer"].max() == 6 and frame["head"].max() == 12


# --- trained embeddings ---


@pytest.mark.parametrize("d_model", [2, 4, 16])
def test_trained_embeddings_shape(trained, pca, d_model):
    words = ["the", "river", "bank", "unbelievably", "🙂"]
    E = tm.trained_embeddings(trained, pca, words, d_model)
    assert E.shape == (5, d_model) and torch.isfinite(E).all()


def test_trained_embeddings_are_deterministic(trained, pca):
    again = tm.fit_vocabulary_pca(trained.model.word_embeddings)
    torch.testing.assert_close(pca.components, again.components)
    words = ["cat", "dog", "money"]
    torch.testing.assert_close(
        tm.trained_embeddings(trained, pca, words, 8), tm.trained_embeddings(trained, again, words, 8)
    )
    largest = pca.components.gather(0, pca.components.abs().argmax(dim=0, keepdim=True))
    assert (largest > 0).all()  # each component's sign is fixed
    torch.testing.assert_close(pca.components.T @ pca.components, torch.eye(16), atol=1e-4, rtol=0)


def test_related_words_point_the_same_way(trained, pca):
    E = torch.nn.functional.normalize(tm.trained_embeddings(trained, pca, ["cat", "dog", "money"], 16), dim=1)
    assert E[0] @ E[1] > E[0] @ E[2]


def test_word_vector_averages_the_pieces(trained, reference):
    """Checked against transformers' embedding table and tokenizer, not the lab's."""
    from transformers import AutoTokenizer

    table = reference.embeddings.word_embeddings.weight.detach()  # (vocab, 384)
    tokenizer = AutoTokenizer.from_pretrained(tm.model_folder(), local_files_only=True)
    ids = tokenizer("unbelievably", add_special_tokens=False)["input_ids"]
    assert len(ids) == 5
    torch.testing.assert_close(tm.word_vectors(trained, ["unbelievably"])[0], table[ids].mean(0))
    unknown = table[tokenizer.unk_token_id]  # a word with no piece gets [UNK]'s row
    torch.testing.assert_close(tm.word_vectors(trained, ["\u200b"])[0], unknown)


# --- faults ---


def _copy_model(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    for name in tm.REQUIRED_FILES:
        (folder / name).symlink_to(tm.model_folder() / name)
    return folder


def test_a_corrupt_weights_file_is_refused(tmp_path):
    folder = _copy_model(tmp_path)
    (folder / tm.WEIGHTS_FILE).unlink()
    (folder / tm.WEIGHTS_FILE).write_bytes(b"not a safetensors file")
    with pytest.raises(tm.ModelUnavailable, match="sha256"):
        tm.load_model(folder)


def test_a_missing_file_is_refused(tmp_path):
    folder = _copy_model(tmp_path)
    (folder / "vocab.txt").unlink()
    with pytest.raises(tm.ModelUnavailable, match=r"lacks vocab\.txt"):
        tm.load_model(folder)


def test_a_broken_config_is_refused(tmp_path):
    folder = _copy_model(tmp_path)
    (folder / "config.json").unlink()
    (folder / "config.json").write_text("{ this is not json")
    with pytest.raises(tm.ModelUnavailable, match=r"config\.json has sha256"):  # refused before the lab reads it
        tm.load_model(folder)


def test_a_file_the_lab_cannot_read_is_refused_without_server_paths(tmp_path, monkeypatch):
    folder = _copy_model(tmp_path)
    (folder / "config.json").unlink()
    (folder / "config.json").write_text("{ this is not json")
    monkeypatch.setitem(tm.MODEL_FILES, "config.json", tm.file_sha256(folder / "config.json"))
    with pytest.raises(tm.ModelUnavailable, match="could not load") as caught:
        tm.load_model(folder)
    assert str(tmp_path) not in str(caught.value)


def test_every_file_the_lab_loads_has_its_published_sha256():
    folder = tm.model_folder()
    loaded = {"config.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt", tm.WEIGHTS_FILE}
    assert loaded <= set(tm.MODEL_FILES)
    for name, expected in tm.MODEL_FILES.items():
        assert tm.file_sha256(folder / name) == expected, name


def _swap_two_lines(text: str, first: int, second: int) -> str:
    lines = text.split("\n")
    lines[first], lines[second] = lines[second], lines[first]
    return "\n".join(lines)


@pytest.mark.parametrize("name", ["vocab.txt", "tokenizer.json"])
def test_a_changed_tokenizer_file_is_refused_naming_it(tmp_path, name):
    """Swapping two ids in vocab.txt or tokenizer.json used to load silently (attention off by up to 0.71)."""
    folder = _copy_model(tmp_path)
    original = (tm.model_folder() / name).read_text(encoding="utf-8")
    if name == "vocab.txt":
        changed = _swap_two_lines(original, 2000, 2001)  # two word pieces trade ids
    else:
        changed = original.replace('"the":1996', '"the":1997', 1)  # one id, one byte
        assert changed != original
    (folder / name).unlink()
    (folder / name).write_text(changed, encoding="utf-8")
    with pytest.raises(tm.ModelUnavailable, match=rf"^{re.escape(name)} has sha256 .* not the published") as caught:
        tm.load_model(folder)
    assert str(tmp_path) not in str(caught.value)


def test_missing_package_is_explained(monkeypatch):
    monkeypatch.setattr(tm, "PACKAGE", "no_such_package_for_the_lab")
    with pytest.raises(tm.ModelUnavailable, match="not installed"):
        tm.model_folder()


# --- issue 22: measured head figures, the heads linking two pieces, the sidebar word's pieces ---


def test_pattern_rows_count_the_rows_whose_top_weight_is_on_the_key():
    weights = _rows_on([1, 2, 3, 3, 5, 5])  # rows 0-2 and 4 on the next piece; row 5 has no next piece
    assert tm.pattern_rows(weights, "next") == tm.RowsOn(4, 5)
    assert tm.pattern_rows(weights, "same") == tm.RowsOn(2, 6)  # rows 3 and 5
    assert tm.pattern_rows(weights, "previous") == tm.RowsOn(0, 5)
    assert tm.RowsOn(4, 5).fraction == 0.8 and tm.RowsOn(0, 0).fraction == 0.0


def test_head_summary_names_a_strong_link_the_average_hides():
    """Most rows on [CLS], but row 3 puts 0.55 on piece 1 (not a pattern key for it): the label is CLS and the
    summary reports that link with its weight."""
    weights = _rows_on([0] * T)
    weights[3] = 0.0
    weights[3, 1], weights[3, 0] = 0.55, 0.45
    summary = tm.head_summary(weights)
    assert (summary.label, summary.pattern, summary.rows_on) == ("CLS", "CLS", tm.RowsOn(5, 6))
    assert summary.share == pytest.approx((5 + 0.45) / 6)
    assert summary.link == (3, 1, pytest.approx(0.55))


def test_head_summary_of_a_uniform_head_is_broad():
    summary = tm.head_summary(torch.full((T, T), 1 / T))
    assert summary.label == "broad" and summary.entropy_fraction == pytest.approx(1.0)
    assert summary.share == pytest.approx(1 / T)


def test_strongest_head_is_the_one_with_most_rows_on_the_pattern():
    attentions = torch.full((2, 3, T, T), 1 / T)
    attentions[1, 2] = _rows_on([*range(1, T), T - 1])  # every row with a next piece looks at it
    attentions[0, 1] = _rows_on([1, 2, 3, 0, 0, 0])
    layer, head, rows_on = tm.strongest_head(attentions, "next")
    assert (layer, head, rows_on) == (1, 2, tm.RowsOn(T - 1, T - 1))


@pytest.mark.parametrize(("query", "key"), [(3, 2), (1, 0), (5, 5)])
def test_heads_linking_ranks_the_forwards_attentions(trained, reference, query, key):
    """Checked against transformers' own output_attentions, not against the Forward the function reads."""
    sentence = "The chef who ran to the store was out of food."
    ids, _, _ = tm.encode(trained.tokenizer, sentence)
    with torch.no_grad():
        attentions = reference(input_ids=torch.tensor([ids]), output_attentions=True).attentions
    weights = torch.stack([a[0, :, query, key] for a in attentions])  # (L, h)
    ranked = tm.heads_linking(tm.run_forward(trained, sentence).attentions, query, key)
    assert len(ranked) == tm.ALL_HEADS and ranked["weight"].is_monotonic_decreasing
    layer, head = divmod(int(weights.argmax()), tm.NUM_HEADS)
    assert (ranked.at[0, "layer"], ranked.at[0, "head"]) == (layer + 1, head + 1)
    assert ranked.at[0, "weight"] == pytest.approx(float(weights.max()), abs=1e-6)
    for row in ranked.itertuples():
        assert row.weight == pytest.approx(float(weights[row.layer - 1, row.head - 1]), abs=1e-6)


def test_word_pieces_follow_the_characters_of_each_word(trained):
    words = ["I", "saw", "the", "step,", "unbelievably!"]
    _, pieces, _ = tm.encode(trained.tokenizer, " ".join(words))
    spans = tm.word_pieces(trained.tokenizer, words)
    assert [[pieces[p] for p in span] for span in spans] == [
        ["i"], ["saw"], ["the"], ["step", ","], ["un", "##bel", "##ie", "##va", "##bly", "!"],
    ]  # fmt: skip
    assert tm.query_piece(spans, 2) == tm.QueryPiece(3, (3,)) and tm.query_piece(spans, 2).exact
    chosen = tm.query_piece(spans, 4)
    assert chosen.index == 6 and not chosen.exact
    assert tm.query_piece([(), (1,)], 0) == tm.QueryPiece(1, ())


def test_agreement_verdict_fails_at_the_tolerance():
    assert tm.agrees(0.0, tm.AGREEMENT_TOLERANCE / 2)
    assert not tm.agrees(0.0, tm.AGREEMENT_TOLERANCE)


# --- a head by reference: zero-based inside, numbered from 1 in text ---


@pytest.mark.parametrize(("layer_number", "head_number"), [(1, 1), (3, 7), (tm.NUM_LAYERS, tm.NUM_HEADS)])
def test_head_ref_is_zero_based_and_named_from_one(layer_number, head_number):
    ref = tm.HeadRef.numbered(layer_number, head_number)
    assert (ref.layer, ref.head) == (layer_number - 1, head_number - 1)  # what attentions[layer, head] indexes
    assert (ref.layer_number, ref.head_number) == (layer_number, head_number)
    assert ref.name == f"layer {layer_number}, head {head_number}"
    assert ref.weight_rows == ((head_number - 1) * tm.D_K + 1, head_number * tm.D_K)


@pytest.mark.parametrize(("layer_number", "head_number"), [(0, 1), (1, 0), (tm.NUM_LAYERS + 1, 1), (1, 13)])
def test_head_ref_refuses_a_number_the_selectors_do_not_offer(layer_number, head_number):
    with pytest.raises(ValueError):
        tm.HeadRef.numbered(layer_number, head_number)


def test_head_slice_is_the_heads_rows_of_the_linear_weight(trained, reference):
    """head_slice(h) picks the rows head_params transposes: W_q of head h is query.weight[head_slice(h)].T."""
    query = reference.encoder.layer[2].attention.self.query
    for head in (0, 6, tm.NUM_HEADS - 1):
        assert torch.equal(tm.head_params(trained.model, 2, head).W_q, query.weight.detach()[tm.head_slice(head)].T)
    assert [tm.head_slice(h).stop - tm.head_slice(h).start for h in range(tm.NUM_HEADS)] == [tm.D_K] * tm.NUM_HEADS


def test_two_sessions_running_the_shared_model_at_once_get_their_own_contexts(trained):
    """Issue 25 part 2: the model is one per server; its context hooks must not hand one session's layer outputs to
    another session's forward running at the same time (on main: wrong contexts or a failed stack)."""
    import threading

    sentences = ("the cat sat on the mat", "a river bank full of water and fish swimming around all day long")
    expected = {sentence: tm.run_forward(trained, sentence).contexts for sentence in sentences}
    wrong: list[str] = []
    start = threading.Barrier(2, timeout=30)

    def session(sentence: str) -> None:
        start.wait()
        for _ in range(20):
            try:
                if not torch.equal(tm.run_forward(trained, sentence).contexts, expected[sentence]):
                    wrong.append(sentence)
            except RuntimeError as error:
                wrong.append(str(error))

    threads = [threading.Thread(target=session, args=(sentence,)) for sentence in sentences]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not wrong, f"{len(wrong)} of 40 forwards got another session's contexts: {wrong[:2]}"
