"""Exercises of lessons 10-12: a trained encoder, training attention live, generation with a KV cache."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace
from decimal import Decimal

import torch

import attention_core as ac
from attention_core.exercises.base import (
    SHOWN_HALF_UNIT,
    Exercise,
    ExerciseInput,
    asked,
    fmt,
    joined,
    labelled_values,
    pick_options,
    quote,
    shown_numbers,
    shown_options,
    tolerance,
    top_index,
)
from attention_core.i18n import N_, _
from attention_core.numbers import exp_text, result_text, rounded_text, sum_text, written_value


@dataclass(frozen=True)
class TrainedMaterial:
    """Lesson 10: the sentence through all-MiniLM-L6-v2, and the model (read-only) for one head's parameters."""

    forward: object  # trained_model.Forward
    model: object  # bert.BertEncoder: the published weights the lab's own forward runs
    layer: int = 0  # the head the page shows, 0-based (the page reads them 1-based)
    head: int = 0
    query: int = 1  # the query piece the page outlines


@dataclass(frozen=True)
class TrainingMaterial:
    """Lesson 11: the toy task's settings, its held-out example and the snapshots so far (step 0 only if untrained)."""

    settings: object  # training.TrainingSettings
    example: torch.Tensor  # (T,)
    snapshots: tuple  # training.Snapshot, step 0 first


@dataclass(frozen=True)
class GenerationMaterial:
    """Lesson 12: the head the page generates with: X (T, d_model), W_q, W_k, W_v (d_model, d_k), labels."""

    X: torch.Tensor
    W_q: torch.Tensor
    W_k: torch.Tensor
    W_v: torch.Tensor
    labels: tuple[str, ...]
    step: int  # the step the page's slider shows, 0-based (the page counts from 1)
    online_row: int  # the query row and block size of the page's online softmax
    block_size: int


BIAS_OPTIONS = (N_("stay the same"), N_("all become 1/T"), N_("move towards [CLS]"), N_("change unpredictably"))
FUTURE_OPTIONS = (N_("yes, once trained"), N_("yes, a little"), N_("no: the key is in its future"))
CACHE_OPTIONS = (N_("none: earlier rows never change"), N_("the last row only"), N_("all of them"))


def trained_exercises(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    """Lesson 10: the shown head's favourite key, its label, the query row's entropy, and dropping b_k."""
    from attention_core import trained_model as tm  # only this lesson needs it

    if not isinstance(inp.material, TrainedMaterial):
        return []
    forward = inp.material.forward
    P = tuple(ac.token_labels(forward.pieces))
    T = len(P)
    layer, head = inp.material.layer, inp.material.head
    i = min(inp.material.query, T - 1)
    where = _("layer {layer}, head {head} (the head shown above)", layer=layer + 1, head=head + 1)
    params = tm.head_params(inp.material.model, layer, head)
    X = forward.hidden_states[layer]  # (T, d_model)
    steps = tm.head_by_hand(X, params)
    weights = steps.weights  # (T, T)
    row = forward.attentions[layer, head, i]  # (T,) the row as the page shows it (the model's)
    top = top_index(row)
    label = tm.head_label(weights)
    shares = tm.head_shares(weights)
    entropy = float(ac.row_entropy(row.unsqueeze(0))[0])
    # reading each weight at 4 decimals moves -w ln w by at most |ln w + 1| per half unit
    entropy_within = tolerance(sum(abs(math.log(w) + 1) * SHOWN_HALF_UNIT for w in row.tolist() if w > 1e-4))
    bias_term = float(steps.Q[i] @ params.b_k) / math.sqrt(tm.D_K)
    no_bias = tm.head_by_hand(X, replace(params, b_k=torch.zeros_like(params.b_k)))
    gap = float((no_bias.weights[i] - row).abs().max())
    return [
        Exercise(
            id="trained-top",
            kind="choice",
            prompt=_(
                "In {where} of all-MiniLM-L6-v2, which piece does the query {query} attend to most?",
                where=where,
                query=quote(P[i]),
            ),
            answer=P[top],
            hint=_(
                "Softmax keeps the order of the scores: the largest scaled score of the query's row gets the largest "
                "weight."
            ),
            solution=_(
                "Scaled scores of row {query}: {scores}; weights {weights}: the largest is {top}.",
                query=quote(P[i]),
                scores=labelled_values(P, steps.scaled_scores[i]),
                weights=labelled_values(P, row),
                top=quote(P[top]),
            ),
            options=pick_options(P, top, rng),
            uses=shown_numbers(steps.scaled_scores[i]),
            reveals=shown_numbers(row),  # the query's row of weights: drawn once this is settled
        ),
        Exercise(
            id="trained-label",
            kind="choice",
            prompt=_(
                "Which label does {where} get on this sentence, by the labelling rules of the step “What heads do” "
                "(the hint sums them up)?",
                where=where,
            ),
            answer=label,
            hint=_(
                "Average over the queries the weight on [CLS], [SEP], the previous, next and same piece; a share of "
                "at least {share} names the head, else look at the entropy.",
                share=f"{tm.LABEL_SHARE:g}",
            ),
            solution=_(
                "Mean shares: {shares}; mean row entropy {entropy} of ln T = {uniform}: the label is {label}.",
                shares=", ".join(f"{_(name)} {fmt(value)}" for name, value in shares.items()),
                entropy=fmt(float(ac.row_entropy(weights).mean())),
                uniform=fmt(math.log(T)),
                label=quote(_(label)),
            ),
            options=tm.HEAD_LABELS,
            option_labels=shown_options(tm.HEAD_LABELS),
            reveals=(tm.head_summary(forward.attentions[layer, head]).share,),  # the figure behind the label
        ),
        Exercise(
            id="trained-entropy",
            kind="numeric",
            prompt=asked(
                _(
                    "From the row of the query {query} in {where}, compute its entropy −Σ w ln w (in nats), then check "
                    "it under the row's table.",
                    query=quote(P[i]),
                    where=where,
                ),
                entropy_within,
            ),
            answer=entropy,
            hint=_(
                "Add −w ln w over the row's {T} weights (a weight of 0 adds 0); a uniform row would give ln {T}.", T=T
            ),
            solution=_(
                "Weights {weights}; −Σ w ln w = {entropy} (uniform: ln {T} = {uniform}).",
                weights=labelled_values(P, row),
                entropy=fmt(entropy),
                T=T,
                uniform=fmt(math.log(T)),
            ),
            tolerance=entropy_within,
            uses=shown_numbers(row),
        ),
        Exercise(
            id="trained-no-bias",
            kind="what-if",
            prompt=_(
                "What if the key bias b_k of {where} were dropped (K = X W_k instead of X W_k + b_k)? The weights of "
                "the query {query} would …",
                where=where,
                query=quote(P[i]),
            ),
            answer=BIAS_OPTIONS[0],
            hint=_("The bias adds q · b_k to the score of every key of the row: the same number for every key."),
            solution=_(
                "q · b_k / √{d_k} = {term} is added to every score of row {query}; softmax ignores a constant added "
                "to a whole row (recomputed without b_k: the weights move by at most {gap}).",
                d_k=tm.D_K,
                term=fmt(bias_term),
                query=quote(P[i]),
                gap=fmt(gap),
            ),
            options=BIAS_OPTIONS,
            option_labels=shown_options(BIAS_OPTIONS),
        ),
    ]


def training_exercises(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    """Lesson 12: the key the task needs, spread-out weights, the causal future, the loss's count, progress."""
    from attention_core import training as tr

    if not isinstance(inp.material, TrainingMaterial):
        return []
    settings, example, snapshots = inp.material.settings, inp.material.example, inp.material.snapshots
    labels = tr.position_labels(settings.task, example)
    T = len(labels)
    keys = tr.ideal_keys(settings.task, example)  # (T,)
    ideal = tr.ideal_pattern(settings.task, example)  # (T, T)
    scored = [q for q in range(T) if int(keys[q]) >= 0]
    q = rng.choice(scored)
    right = int(keys[q])
    uniform = torch.tril(torch.ones(T, T)) / torch.arange(1, T + 1).unsqueeze(1)  # (T, T) 1/(i+1) up to i
    uniform_close = tr.closeness(uniform, ideal)
    ahead = rng.randrange(T - 1)
    head = rng.randrange(settings.heads)
    last_layer = snapshots[-1].weights.shape[0] - 1
    items = [
        Exercise(
            id="ideal-key",
            kind="choice",
            prompt=_(
                "{task}: in the right pattern, which key should the query {query} attend to (in the last layer)?",
                task=_(tr.TASKS[settings.task]),
                query=quote(labels[q]),
            ),
            answer=labels[right],
            hint=_("Ask what the query must predict, and which earlier position holds that token."),
            solution=_(
                "Query {query} must predict the token at {key}, so its row of the right pattern is 1 there and 0 "
                "elsewhere.",
                query=quote(labels[q]),
                key=quote(labels[right]),
            ),
            options=pick_options(labels[: q + 1], right, rng),
        ),
        Exercise(
            id="uniform-closeness",
            kind="what-if",
            prompt=asked(
                _(
                    "What if every query spread its weight evenly over the keys the causal mask lets it see? What "
                    "would the mean weight on the right key (over the scored queries) be?"
                ),
                tolerance(),
            ),
            answer=uniform_close,
            hint=_(
                "The query at position p (counted from 1) sees keys 1 to p, so each gets 1/p; average that over the "
                "scored queries."
            ),
            solution=_(
                "Scored positions {positions}: mean of {terms} = {mean}.",
                positions=", ".join(str(s + 1) for s in scored),
                terms=joined([f"1/{s + 1}" for s in scored], ", "),
                mean=fmt(uniform_close),
            ),
            tolerance=tolerance(),
        ),
        Exercise(
            id="causal-future",
            kind="what-if",
            prompt=_(
                "The model is causal. Can the query {query} put any weight on the key {key}?",
                query=quote(labels[ahead]),
                key=quote(labels[ahead + 1]),
            ),
            answer=FUTURE_OPTIONS[2],
            hint=_("Compare the two positions: a causal mask hides every key after the query."),
            solution=_(
                "Key {key} comes after query {query}: its score is −∞ before softmax, so its weight is exactly 0 at "
                "every step of training.",
                key=ahead + 2,
                query=ahead + 1,
            ),
            options=FUTURE_OPTIONS,
            option_labels=shown_options(FUTURE_OPTIONS),
        ),
        Exercise(
            id="batch-scored",
            kind="numeric",
            prompt=_(
                "Each training step's batch holds {batch} sequences built like the example (the same positions "
                "scored). Over how many scored positions N does one batch's loss average? Exact count.",
                batch=tr.BATCH,
            ),
            answer=float(tr.BATCH * len(scored)),
            hint=_("Count the positions of the example whose target is not '·', then multiply by the sequences."),
            solution=_(
                "Scored: positions {positions}, {count} per sequence; {count} × {batch} = {total}.",
                positions=", ".join(str(s + 1) for s in scored),
                count=len(scored),
                batch=tr.BATCH,
                total=tr.BATCH * len(scored),
            ),
        ),
    ]
    if len(snapshots) > 1 and snapshots[0].step != snapshots[-1].step:
        first, last = snapshots[0], snapshots[-1]
        start = tr.closeness(first.weights[last_layer, head], ideal)
        end = tr.closeness(last.weights[last_layer, head], ideal)
        answer = f"step {last.step}" if end > start else f"step {first.step}"
        items.append(
            Exercise(
                id="closer",
                kind="choice",
                prompt=_(
                    "Layer {layer}, head {head}: is its pattern closer to the right one at step {first} or at step "
                    "{last}?",
                    layer=last_layer + 1,
                    head=head + 1,
                    first=first.step,
                    last=last.step,
                ),
                answer=answer,
                hint=_(
                    "Training lowers the loss; for this task that means more weight on the key holding what each "
                    "query must predict. The held-out accuracy of the step “Train it” says how far it got."
                ),
                solution=_(
                    "Weight on the right key: {start} at step {first}, {end} at step {last}.",
                    start=fmt(start),
                    first=first.step,
                    end=fmt(end),
                    last=last.step,
                ),
                options=(f"step {first.step}", f"step {last.step}"),
                option_labels=(_("step {step}", step=first.step), _("step {step}", step=last.step)),
                reveals=(start, end),  # the weights on the right key at both steps (the step slider shows them)
            )
        )
    return items


def generation_exercises(inp: ExerciseInput, rng: random.Random) -> list[Exercise]:
    """Lesson 13: the cache's size and favourite key at the shown step, a running sum, cost, and the cache's past;
    on the material of the step on the real model (SmolCacheMaterial), SmolLM2's cache instead."""
    from attention_core import generation as gen

    if isinstance(inp.material, SmolCacheMaterial):  # the step on the real model: SmolLM2's cache
        return smol_cache_exercises(inp.material, rng)
    if not isinstance(inp.material, GenerationMaterial):
        return []
    m = inp.material
    L = m.labels
    T, d_model = m.X.shape
    d_k, d_v = m.W_k.shape[1], m.W_v.shape[1]
    steps = gen.cached_attention(m.X, m.W_q, m.W_k, m.W_v)
    t = min(m.step, T - 1)
    cached_numbers = steps[t].K.numel() + steps[t].V.numel()
    top = top_index(steps[t].weights)
    row_index, block_size = min(m.online_row, T - 1), m.block_size
    online = gen.online_softmax_steps(gen.masked_scores(m.X, m.W_q, m.W_k)[row_index], block_size)
    doubled = gen.total_multiply_adds(2 * T, d_model, d_k, d_v, cached=False)
    doubled_cached = gen.total_multiply_adds(2 * T, d_model, d_k, d_v, cached=True)
    return [
        Exercise(
            id="cache-numbers",
            kind="numeric",
            prompt=_(
                "After step {step} (the new token {token}, the step slider above), how many numbers do the K and V "
                "caches hold together (d_k = {d_k}, d_v = {d_v})? Exact count.",
                step=t + 1,
                token=quote(L[t]),
                d_k=d_k,
                d_v=d_v,
            ),
            answer=float(cached_numbers),
            hint=_("One K row and one V row per token so far."),
            solution=_(
                "{n} tokens × (d_k + d_v) = {n} × ({d_k} + {d_v}) = {count}.",
                n=t + 1,
                d_k=d_k,
                d_v=d_v,
                count=cached_numbers,
            ),
        ),
        Exercise(
            id="step-top",
            kind="choice",
            prompt=_(
                "At step {step}, which cached key gets the most weight from the new token {token}'s query?",
                step=t + 1,
                token=quote(L[t]),
            ),
            answer=L[top],
            hint=_("Only the keys of steps 1 to t are in the cache; the largest scaled score q · k / √d_k wins."),
            solution=_(
                "Scores q · k / √{d_k}: {scores}; weights {weights}.",
                d_k=d_k,
                scores=labelled_values(L[: t + 1], steps[t].scores),
                weights=labelled_values(L[: t + 1], steps[t].weights),
            ),
            options=pick_options(L[: t + 1], top, rng),
            uses=shown_numbers(steps[t].scores),
            reveals=shown_numbers(steps[t].weights),  # the weights compared (the step draws them once settled)
        ),
        running_sum_exercise(L[row_index], online, query_block(row_index, block_size), block_size),
        Exercise(
            id="double-length",
            kind="what-if",
            prompt=_(
                "What if the sequence had {doubled} tokens instead of {T}? How many multiply-adds would one head need "
                "in total without the cache (d_model = {d_model}, d_k = {d_k}, d_v = {d_v})? Exact count.",
                doubled=2 * T,
                T=T,
                d_model=d_model,
                d_k=d_k,
                d_v=d_v,
            ),
            answer=float(doubled),
            hint=_("Step n (n tokens so far) redoes every projection and the whole n × n scores and context."),
            solution=_(
                "Σ over n = 1..{length} of n · {d_model}·(2·{d_k} + {d_v}) + n² · ({d_k} + {d_v}) = {total}; with the "
                "cache it would be {cached}.",
                length=2 * T,
                d_model=d_model,
                d_k=d_k,
                d_v=d_v,
                total=f"{doubled:,}",
                cached=f"{doubled_cached:,}",
            ),
        ),
        Exercise(
            id="cache-unchanged",
            kind="what-if",
            prompt=_(
                "What if the token at step {step} had been another word? Which rows already in the cache would change?",
                step=t + 1,
            ),
            answer=CACHE_OPTIONS[0],
            hint=_("A cache row depends only on its own token: k_j = x_j W_k."),
            solution=_(
                "Rows 1 to {last} are x_j W_k and x_j W_v of earlier tokens: the new token only appends row {new}.",
                last=t,
                new=t + 1,
            )
            if t
            else _("At step 1 the cache is empty before the new row is appended."),
            options=CACHE_OPTIONS,
            option_labels=shown_options(CACHE_OPTIONS),
        ),
    ]


def query_block(row_index: int, block_size: int) -> int:
    """The block (0-based) of an online softmax row that holds the query's own key: the last with a score that is
    not masked. The question asks for the running sum after it, so the page shows the sums up to the block before."""
    return row_index // block_size


def written_exp(s: float, m: float) -> Decimal:
    """e^(s − m) of s and m as written (4 decimals each): what ``exp_text`` writes after its "="."""
    return (written_value(fmt(s)) - written_value(fmt(m))).exp()


def running_sum_exercise(label: str, online: list, b: int, block_size: int) -> Exercise:
    """The running sum l after block b (the query's own): l e^(m − m′) + Σ e^(s_j − m′), from l, m and m′ of the
    table and the block's scores, each term written out from its printed operands."""
    step = online[b]
    scores = [float(v) for v in step.values.tolist() if math.isfinite(float(v))]  # a masked key adds e^(−∞) = 0
    terms = [math.exp(s - step.new_max) for s in scores]
    term_lines = "; ".join(exp_text(s, step.new_max, t) for s, t in zip(scores, terms, strict=True))
    written = [float(rounded_text(written_exp(s, step.new_max))) for s in scores]  # each term as its line writes it
    slack = sum(2 * SHOWN_HALF_UNIT * t for t in terms)  # s_j and m′ read at 4 decimals
    operands: tuple[float, ...] = (step.new_max, *scores)
    if b == 0:  # the sum starts empty: l′ is the block's terms alone
        carried_line = _("The sum is empty before block 1 (l = 0)")
    else:
        old_sum, rescale = online[b - 1].running_sum, math.exp(step.old_max - step.new_max)
        shown_rescale = float(rounded_text(written_exp(step.old_max, step.new_max)))
        product = written_value(fmt(old_sum)) * written_value(fmt(shown_rescale))
        carried_line = _(
            "The sum so far, rescaled: e^(m − m′) = {rescale}, and {old_sum} × {factor} = {product}",
            rescale=exp_text(step.old_max, step.new_max, rescale),
            old_sum=fmt(old_sum),
            factor=fmt(shown_rescale),
            product=result_text(product, old_sum * rescale, bold=False),
        )
        written = [float(rounded_text(product)), *written]
        slack += SHOWN_HALF_UNIT * rescale + 2 * SHOWN_HALF_UNIT * old_sum * rescale  # l, m and m′ read
        operands = (old_sum, step.old_max, *operands)
    within = tolerance(slack)
    return Exercise(
        id="running-sum",
        kind="numeric",
        prompt=asked(
            _(
                "Online softmax of the query {query}'s row in blocks of {size} keys (the tables under “Online softmax, "
                "block by block”): block {block} holds the query's own key. From the running sum l and the maximum m "
                "before it, its new maximum m′ and its scores, compute the running sum after it: "
                "l′ = l · e^(m − m′) + Σ e^(s_j − m′) over the block's keys.",
                query=quote(label),
                size=block_size,
                block=b + 1,
            ),
            within,
        ),
        answer=step.running_sum,
        hint=_(
            "Rescale the sum so far by e^(m − m′) (before block 1, l = 0), then add e^(s_j − m′) for each score of the "
            "block (a masked key, −∞, adds 0)."
        ),
        solution=_(
            "{carried}. The block's terms: {terms}. l′ = {total}.",
            carried=carried_line,
            terms=term_lines,
            total=sum_text(written, step.running_sum, bold=False),
        ),
        tolerance=within,
        uses=shown_numbers(operands),
    )


# --- the generation lesson's step on SmolLM2's cache --------------------------------------------------------


CACHE_TOKENS = (10, 100, 500, 2000, 4096)  # lengths the question asks about (none is a row of the step's table)


@dataclass(frozen=True)
class SmolCacheMaterial:
    """What the generation lesson's step "GQA and the KV cache" shows: SmolLM2's architecture (smollm2.Config, whose
    layers, query heads, key/value heads and head size the step writes) and the bytes per number of its cache."""

    config: object  # smollm2.Config
    bytes_per_number: int


def _grouped(count: int) -> str:
    """A whole number as the step writes it (23,040)."""
    return f"{count:,}"


def smol_cache_exercises(m: SmolCacheMaterial, rng: random.Random) -> list[Exercise]:
    """The cache after N tokens, how many query heads share a key/value head, and the bytes per token of another
    cache (float32 numbers, one key/value head, or full multi-head attention in float32). Every answer is a whole
    number: exact (tolerance 0), typed as digits."""
    from attention_core import smollm2 as sm

    c = m.config
    b = m.bytes_per_number
    per_token = sm.kv_cache_bytes_per_token(c, b)
    tokens = rng.choice(CACHE_TOKENS)
    group = c.group_size
    options = sorted({1, 2 * group, group, c.num_heads})
    what_ifs = (
        (_("its cache were stored in float32 (4 bytes per number) instead"), c.num_kv_heads, 4),
        (_("all {heads} query heads shared one key/value head (multi-query attention)", heads=c.num_heads), 1, b),
        (_("it used full multi-head attention ({heads} key/value heads) with float32 (4 bytes per number)",
           heads=c.num_heads), c.num_heads, 4),
    )  # fmt: skip
    change, kv_heads, number_bytes = rng.choice(what_ifs)
    changed = sm.kv_cache_bytes_per_token(c, number_bytes, kv_heads=kv_heads)
    return [
        Exercise(
            id="gqa-tokens",
            kind="numeric",
            prompt=_(
                "The step gives SmolLM2's cache growth per token with grouped-query attention. How many bytes do the "
                "keys and values of {tokens} tokens take in the cache? Exact count, digits only.",
                tokens=_grouped(tokens),
            ),
            answer=float(per_token * tokens),
            hint=_("Bytes per token (the bold figure above) times the number of tokens."),
            solution=_(
                "{per_token} bytes per token × {tokens} tokens = {total} bytes.",
                per_token=_grouped(per_token),
                tokens=_grouped(tokens),
                total=_grouped(per_token * tokens),
            ),
        ),
        Exercise(
            id="gqa-group",
            kind="choice",
            prompt=_("In SmolLM2, how many query heads share one key/value head?"),
            answer=str(group),
            hint=_("Divide the query heads by the key/value heads."),
            solution=_(
                "{heads} query heads / {kv_heads} key/value heads = {group} per key/value head: that is also why full "
                "multi-head attention's cache is {group} times as large.",
                heads=c.num_heads,
                kv_heads=c.num_kv_heads,
                group=group,
            ),
            options=tuple(str(n) for n in options),
        ),
        Exercise(
            id="gqa-what-if",
            kind="what-if",
            prompt=_(
                "What if {change}? How many bytes would SmolLM2's cache grow by per token? Exact count, digits only.",
                change=change,
            ),
            answer=float(changed),
            hint=_("2 (K and V) × layers × key/value heads × head size × bytes per number, with the changed factor."),
            solution=_(
                "2 × {layers} × {kv_heads} × {head_dim} × {bytes} = {changed} bytes per token, against {per_token} as "
                "the model is.",
                layers=c.num_layers,
                kv_heads=kv_heads,
                head_dim=c.head_dim,
                bytes=number_bytes,
                changed=_grouped(changed),
                per_token=_grouped(per_token),
            ),
        ),
    ]
