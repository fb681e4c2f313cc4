"""Lesson 11: how attention is learned. Train a tiny transformer live and watch its attention pattern form."""

import dataclasses

import pandas as pd
import streamlit as st
import torch

from attention_core import cell_math
from attention_core import training as tr
from attention_core.exercises import TrainingMaterial
from attention_core.i18n import N_, _
from attention_core.masks import causal_mask
from ui import charts, page
from ui.models import training_runs
from ui.page import exercises_section, format_number, learner_text, lesson_steps, whole_lesson
from ui.widgets import inputs
from ui.widgets.inputs import LabInput

LEARNING_RATES = (0.0001, 0.0003, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 10.0, 100.0)
KEYS = ("task", "seed", "layers", "heads", "steps", "learning_rate", "mlp")


def task_name(task: str) -> str:
    """A task as the learner reads it ('Reverse the sequence'), in the learner's language."""
    return _(tr.TASKS[task])


TAKES = {  # what each setting's control (and a link's training_<setting>=) takes
    "task": inputs.Choice(tuple(tr.TASKS), task_name),
    "seed": inputs.Number(0, tr.SEED_LIMIT),
    "layers": inputs.Choice((1, 2)),
    "heads": inputs.Choice((1, 2, 3, 4)),
    "steps": inputs.Number(*tr.LIMITS["steps"]),
    "learning_rate": inputs.Choice(LEARNING_RATES),
    "mlp": inputs.Switch(),
}
FRESH = tr.TrainingSettings()  # what the controls declare: a new session's settings (the URL holds the others)
LABELS = {  # the controls' labels, translated where shown
    "task": N_("Task"),
    "seed": N_("Seed"),
    "layers": N_("Layers"),
    "heads": N_("Heads per layer"),
    "steps": N_("Steps"),
    "learning_rate": N_("Learning rate"),
    "mlp": N_("Small MLP after attention"),
}


def render(lab: LabInput) -> None:
    """The lesson's outline: one function per step."""
    page.lesson_title(__file__)
    chosen: list[tr.TrainingSettings | None] = []  # the task step's settings when this run draws it (None: unfit)
    whole = whole_lesson()  # one page: the training fragment draws the heads too, as they change with a run

    def settings() -> tr.TrainingSettings | None:
        return chosen[0] if chosen else settings_in_session()

    lesson_steps(
        __file__,
        {
            N_("Why training"): intro,
            N_("The task"): lambda: chosen.append(task_step(lab, whole)),
            N_("The right pattern"): lambda: None if whole else pattern_step(lab, settings()),
            TRAIN_IT: lambda: train_step(settings(), whole),
            N_("Watch it learn"): lambda: heads_step(lab, settings(), whole),
        },
    )


TRAIN_IT = N_("Train it")  # the step's name, which the step after it names
TASK_PLACES = ("ideal-key", "uniform-closeness", "causal-future", "batch-scored")  # the questions on the task


def task_step(lab: LabInput, whole: bool = True) -> tr.TrainingSettings | None:
    """The settings, the task they set (``whole``: with the held-out example, the questions on the task and its right
    pattern, which the stepped view shows in the next step); returns the settings (None when they do not fit: then
    nothing is trained)."""
    settings = choose_settings()
    if settings is None:
        return None
    the_task(settings)
    if whole:
        what_attention_must_learn(lab, settings)
    return settings


def pattern_step(lab: LabInput, settings: tr.TrainingSettings | None) -> None:
    """The held-out example, the questions on the task, then its right pattern."""
    if settings is None:
        return
    st.caption(_("The task chosen in the step before: {task}.", task=task_name(settings.task)))
    what_attention_must_learn(lab, settings)


def what_attention_must_learn(lab: LabInput, settings: tr.TrainingSettings) -> None:
    """The held-out example with its targets, the questions on the task, then (once they are settled) the right
    pattern and how many positions are scored: the heatmap answers which key each query needs."""
    st.subheader(_("What attention must learn"))
    held_out_example(settings)
    if check_yourself(lab, settings, places=TASK_PLACES):
        right_pattern(settings)


def train_step(settings: tr.TrainingSettings | None, whole: bool) -> None:
    """Train on demand and watch the attention form while it trains, the loss and accuracy, and the code that ran.
    ``settings``: those of the task step (the last ones that fit); None when the whole lesson shows unfit ones.
    ``whole``: the whole lesson on one page, where the heads after training are drawn here too."""
    if settings is None:
        return
    values = {
        "task": task_name(settings.task),
        "seed": settings.seed,
        "layers": layers_text(settings.layers),
        "heads": heads_text(settings.heads),
        "steps": settings.steps,
        "rate": f"{settings.learning_rate:g}",
    }
    if settings.mlp:
        text = _(
            "Settings from the task step: {task}, seed {seed}, {layers} × {heads}, {steps} steps, learning rate "
            "{rate}, with a small MLP.",
            **values,
        )
    else:
        text = _(
            "Settings from the task step: {task}, seed {seed}, {layers} × {heads}, {steps} steps, learning rate "
            "{rate}.",
            **values,
        )
    st.caption(text)
    trained = training(settings, with_heads=whole)
    page.show_code(tr.causal_attention, tr.TinyTransformer, *((tr.train,) if trained else ()))


def layers_text(n: int) -> str:
    """'1 layer', '2 layers' (one whole phrase per form)."""
    return _("{n} layer", n=n) if n == 1 else _("{n} layers", n=n)


def heads_text(n: int) -> str:
    """'1 head', '2 heads' (one whole phrase per form)."""
    return _("{n} head", n=n) if n == 1 else _("{n} heads", n=n)


def heads_step(lab: LabInput, settings: tr.TrainingSettings | None, whole: bool) -> None:
    """The question on the run, then the heads at any saved step of it beside the right pattern (untrained: step 0,
    and nothing to ask). On the whole lesson's page the training step draws the heads (they follow its run)."""
    if settings is None:
        return
    run = training_runs.mine(settings)
    if run is None:
        if not whole:
            before_training(settings, in_step_before=True)
        return
    if not check_yourself(lab, settings, places=("closer",)):
        return
    first_and_last(run)
    if not whole:
        scrub(run)


def check_yourself(lab: LabInput, settings: tr.TrainingSettings, places: tuple[str, ...]) -> bool:
    """Exercises on the task and on this session's run of these settings (step 0 only until it trains them);
    whether they are settled."""
    run = training_runs.mine(settings)
    example, snapshot = training_runs.untrained(settings)
    snapshots = tuple(run.snapshots) if run is not None else (snapshot,)
    material = TrainingMaterial(settings, example, snapshots)
    key = (*dataclasses.astuple(settings), run is not None)
    return exercises_section(
        __file__,
        lab,
        material=material,
        material_key=key,
        made_from=N_("the task and the run above"),
        places=places,
    )


def intro() -> None:
    st.markdown(
        _(
            """
In the other lessons W_q, W_k and W_v were given. In a real model nobody writes them: they start
random and **gradient descent** changes them, a little at every step, so that the model's
predictions get better. Here a tiny causal transformer (token and position embeddings, one or two
attention layers built from the lab's own `attention_scores → scale_scores → apply_mask → softmax
→ context_vectors`, a read-out to the vocabulary) learns a toy task whose right attention pattern
is known, so you can watch the pattern form.
"""
        )
    )
    st.latex(
        r"\text{loss} = -\frac{1}{N}\sum_{\text{scored } i} \ln p_\theta(\text{target}_i \mid \text{tokens}_{\le i}),"
        r"\qquad \theta \leftarrow \theta - \eta\,\text{AdamW}(\nabla_\theta \text{loss})"
    )
    st.caption(_("This lesson has its own tiny vocabulary (a, b, c, …); the sidebar's sentence is not used here."))


def _on_task_change() -> None:
    """Picking a task loads its recommended settings (a preset that trains in a few seconds)."""
    preset = tr.DEFAULTS[st.session_state["training_task"]]
    for key in KEYS[2:]:  # the seed stays
        st.session_state[f"training_{key}"] = getattr(preset, key)


def choose_settings() -> tr.TrainingSettings | None:
    """The learner's task and settings, validated (an error and None when they do not fit)."""
    chosen = training_runs.chosen_settings()  # the last visit's choices (widget state ends with the page)
    for key in KEYS:
        st.session_state.setdefault(f"training_{key}", getattr(chosen, key))
    top = st.columns(4)
    task = inputs.selectbox(
        _(LABELS["task"]),
        TAKES["task"].options,
        index=TAKES["task"].options.index(FRESH.task),
        format_func=TAKES["task"].format_func,
        key="training_task",
        on_change=_on_task_change,
        container=top[0],
    )
    seed = inputs.number_input(
        _(LABELS["seed"]),
        TAKES["seed"].low,
        TAKES["seed"].high,
        FRESH.seed,
        step=1,
        key="training_seed",
        container=top[1],
    )
    layers = inputs.selectbox(
        _(LABELS["layers"]),
        TAKES["layers"].options,
        index=TAKES["layers"].options.index(FRESH.layers),
        key="training_layers",
        container=top[2],
    )
    heads = inputs.selectbox(
        _(LABELS["heads"]),
        TAKES["heads"].options,
        index=TAKES["heads"].options.index(FRESH.heads),
        key="training_heads",
        container=top[3],
    )
    bottom = st.columns(4)
    steps = inputs.number_input(
        _(LABELS["steps"]),
        TAKES["steps"].low,
        TAKES["steps"].high,
        FRESH.steps,
        step=50,
        key="training_steps",
        container=bottom[0],
    )
    rate = inputs.select_slider(
        _(LABELS["learning_rate"]),
        TAKES["learning_rate"].options,
        value=FRESH.learning_rate,
        key="training_learning_rate",
        container=bottom[1],
    )
    mlp = inputs.toggle(_(LABELS["mlp"]), value=FRESH.mlp, key="training_mlp", container=bottom[2])
    settings = tr.TrainingSettings(task, int(seed), int(layers), int(heads), int(steps), float(rate), bool(mlp))
    try:
        tr.check_settings(settings)
    except ValueError as error:
        st.error(_("{problem} Nothing was trained.", problem=learner_text(error)), icon=":material/error:")
        return None
    training_runs.choose(settings)
    return settings


def settings_in_session() -> tr.TrainingSettings:
    """The settings for a step without the settings' widgets: those the session holds for them (picked in the task
    step, or set by a Try this button on another step) when they fit, else the last ones chosen."""
    chosen = training_runs.chosen_settings()
    held = {key: inputs.linked(f"training_{key}", getattr(chosen, key), TAKES[key], _(LABELS[key])) for key in KEYS}
    settings = tr.TrainingSettings(
        str(held["task"]),
        int(held["seed"]),
        int(held["layers"]),
        int(held["heads"]),
        int(held["steps"]),
        float(held["learning_rate"]),
        bool(held["mlp"]),
    )
    try:
        tr.check_settings(settings)
    except ValueError:
        return chosen
    training_runs.choose(settings)
    return settings


def the_task(settings: tr.TrainingSettings) -> None:
    """A few held-out sequences with their targets."""
    st.subheader(_("The task"))
    tokens, targets = tr.make_batch(settings.task, 6, torch.Generator().manual_seed(settings.seed + 1))
    symbols = tr.vocabulary(settings.task)
    frame = pd.DataFrame(
        {
            _("sequence"): [" ".join(symbols[int(t)] for t in row) for row in tokens],
            _("targets (· = not scored)"): [" ".join(target_text(symbols, t) for t in row) for row in targets],
        }
    )
    st.markdown(
        _(
            "**{task}**: held-out sequences and what each position must predict.",
            task=task_name(settings.task),
        )
    )
    page.frame_table(frame, hide_index=True)
    page.download_csv(frame, f"training-{settings.task}-examples.csv", label=_("Download the examples as CSV"))


def target_text(symbols, target) -> str:
    """A target as the tables write it: its symbol, or · where the position is not scored."""
    return symbols[int(target)] if int(target) != tr.IGNORE else "·"


def held_out_example(settings: tr.TrainingSettings) -> None:
    """The held-out example every heatmap of the lesson shows: each position's token and target."""
    example, _snapshot = training_runs.untrained(settings)
    symbols = tr.vocabulary(settings.task)
    targets = training_runs.example_targets(settings.task, settings.seed)
    st.markdown(
        _(
            "The heatmaps of this lesson show one held-out sequence, the **example**: each position, its token and "
            "what it must predict (· = not scored). The model is causal: a query sees its own position and the ones "
            "before."
        )
    )
    page.frame_table(
        pd.DataFrame(
            {_("token"): [symbols[int(t)] for t in example], _("target"): [target_text(symbols, t) for t in targets]},
            index=tr.position_labels(settings.task, example),
        ),
        hide_index=False,
        alt=_("The held-out example, position by position"),
    )


def right_pattern(settings: tr.TrainingSettings) -> None:
    """The right attention pattern for the held-out example: 1 on the key each scored query needs, and how many
    positions it scores."""
    example, _snapshot = training_runs.untrained(settings)
    labels = tr.position_labels(settings.task, example)
    ideal = tr.ideal_pattern(settings.task, example)  # (T, T)
    page.heatmap(ideal, labels, labels, title=_("The right pattern"))
    scored = [p for p, key in enumerate(tr.ideal_keys(settings.task, example).tolist(), 1) if key >= 0]
    st.caption(
        _(
            "Each scored query's row is 1 on the key holding what it must predict; a row not scored is all 0. "
            "Scored: positions {positions}, {scored} of {count}; a batch of {batch} such sequences gives the loss "
            "{scored} × {batch} = {terms} terms.",
            positions=", ".join(map(str, scored)),
            scored=len(scored),
            count=len(labels),
            batch=tr.BATCH,
            terms=format(len(scored) * tr.BATCH, ","),
        )
    )


@st.fragment
def training(settings: tr.TrainingSettings, with_heads: bool = True) -> bool:
    """Train on demand, then the results of the run (``with_heads``: the heads at each saved step too); True when a
    run is shown (its loop is then shown too).

    Only this session's own runs count: another learner's run of the same settings leaves Train enabled here."""
    st.subheader(_("Training"))
    run = training_runs.mine(settings)
    clicked = st.button(
        _("Train"),
        type="primary",
        icon=":material/play_arrow:",
        key="training_train",
        disabled=run is not None,
        help=_("You trained these settings already: change one to train again.") if run is not None else None,
    )
    if run is None and clicked:
        run = training_runs.train_with_progress(settings, watch=lambda snapshot: watch_attention(settings, snapshot))
    if run is None:
        before_training(settings, heads=with_heads)
        return False
    divergence(run)
    curves(run)
    if with_heads:
        scrub(run)
    return True


def watch_attention(settings: tr.TrainingSettings, snapshot: tr.Snapshot) -> None:
    """While training: the last layer's first head on the held-out example at the latest snapshot."""
    example, _snapshot = training_runs.untrained(settings)
    labels = tr.position_labels(settings.task, example)
    last_layer = snapshot.weights.shape[0] - 1
    page.heatmap(
        snapshot.weights[last_layer, 0],
        labels,
        labels,
        title=_("Attention while training"),
        caption=_(
            "Step {step}: layer {layer}, head 1 on the held-out example (held-out accuracy {accuracy}). It redraws "
            "as the model learns.",
            step=snapshot.step,
            layer=last_layer + 1,
            accuracy=format(snapshot.accuracy, ".0%"),
        ),
    )


def before_training(settings: tr.TrainingSettings, *, heads: bool = True, in_step_before: bool = False) -> None:
    """The untrained model's accuracy and (``heads``) attention: near uniform over the keys each query may see
    (``in_step_before``: the Train button is in the step before)."""
    example, snapshot = training_runs.untrained(settings)
    accuracy = f"{snapshot.accuracy:.0%}"
    if in_step_before:
        text = _(
            "Not trained yet: press **Train** in the step before (“{step}”). Untrained, the model gets {accuracy} of "
            "the held-out predictions right (chance) and its attention is spread over every key it may see.",
            step=_(TRAIN_IT),
            accuracy=accuracy,
        )
    else:
        text = _(
            "Not trained yet: press **Train**. Untrained, the model gets {accuracy} of the held-out predictions right "
            "(chance) and its attention is spread over every key it may see.",
            accuracy=accuracy,
        )
    st.info(text, icon=":material/info:")
    if heads:
        attention_beside_ideal(settings.task, example, snapshot)


def divergence(run: tr.TrainingRun) -> None:
    """Say so when the learning rate made the loss blow up."""
    if run.diverged_at is None:
        return
    st.error(
        _(
            "The loss diverged at step {step} (NaN, infinite or more than {factor}× its start): the learning rate "
            "{rate} is too large. Training stopped; the results below are the last good snapshot (step {last}). "
            "Try a smaller learning rate.",
            step=run.diverged_at,
            factor=format(tr.DIVERGENCE_FACTOR, "g"),
            rate=format(run.settings.learning_rate, "g"),
            last=run.snapshots[-1].step,
        ),
        icon=":material/error:",
    )


def curves(run: tr.TrainingRun) -> None:
    """Loss per step and held-out accuracy per snapshot."""
    final = run.snapshots[-1]
    metrics = st.columns(3)
    metrics[0].metric(_("Held-out accuracy"), f"{final.accuracy:.1%}")
    metrics[1].metric(_("Loss at the last step"), format_number(final.loss))
    metrics[2].metric(_("Steps trained"), len(run.losses))
    losses = pd.DataFrame({"step": range(1, len(run.losses) + 1), "loss": run.losses})
    accuracy = pd.DataFrame({"step": [s.step for s in run.snapshots], "accuracy": [s.accuracy for s in run.snapshots]})
    left, right = st.columns(2)
    with left:
        if len(losses):
            page.chart(
                charts.lines,
                losses,
                x="step",
                y="loss",
                title=_("Training loss"),
                x_title=_("step"),
                y_title=_("loss"),
                log_y=True,
            )
    with right:
        page.chart(
            charts.lines,
            accuracy,
            x="step",
            y="accuracy",
            title=_("Held-out accuracy"),
            x_title=_("step"),
            y_title=_("accuracy"),
        )


def scrub(run: tr.TrainingRun) -> None:
    """A step slider over the saved snapshots: the attention then, beside the right pattern."""
    steps = [snapshot.step for snapshot in run.snapshots]
    chosen = inputs.select_slider(_("Step"), steps, value=steps[-1], key="training_step")
    snapshot = run.snapshots[steps.index(chosen)]
    st.caption(
        _(
            "At step {step}: loss {loss}, held-out accuracy {accuracy}.",
            step=chosen,
            loss=format_number(snapshot.loss),
            accuracy=format(snapshot.accuracy, ".1%"),
        )
    )
    attention_beside_ideal(run.settings.task, run.example, snapshot)


def first_and_last(run: tr.TrainingRun) -> None:
    """Each last-layer head's weight on the right key at the run's first and last saved steps (what the question
    on the run compares)."""
    ideal = tr.ideal_pattern(run.settings.task, run.example)  # (T, T)
    first, last = run.snapshots[0], run.snapshots[-1]
    layer = last.weights.shape[0] - 1
    heads = [
        _(
            "head {head}: {first} at step {first_step}, {last} at step {last_step}",
            head=head + 1,
            first=format_number(tr.closeness(first.weights[layer, head], ideal)),
            first_step=first.step,
            last=format_number(tr.closeness(last.weights[layer, head], ideal)),
            last_step=last.step,
        )
        for head in range(last.weights.shape[1])
    ]
    st.markdown(_("**Weight on the right key**, layer {layer}: {heads}.", layer=layer + 1, heads=_("; ").join(heads)))


def attention_beside_ideal(task: str, example: torch.Tensor, snapshot: tr.Snapshot) -> None:
    """Every head's weights on the example next to the right pattern, with how close each is."""
    labels = tr.position_labels(task, example)
    ideal = tr.ideal_pattern(task, example)
    layers, heads = snapshot.weights.shape[:2]
    _columns, panel_px = charts.head_grid(heads + 1, width_px=1000, per_row=heads + 1)
    for layer in range(layers):
        columns = st.columns(heads + 1)
        for head in range(heads):
            with columns[head]:
                weights = snapshot.weights[layer, head]  # (T, T)
                attention_heatmap(
                    weights, labels, _("Layer {layer}, head {head}", layer=layer + 1, head=head + 1), panel_px
                )
                score = tr.closeness(weights, ideal)
                st.metric(_("Weight on the right key"), format_number(score), help=_(CLOSENESS_HELP))
        with columns[heads]:
            attention_heatmap(ideal, labels, _("The right pattern"), panel_px)
    if layers > 1:
        st.caption(_("The right pattern is the last layer's job; the first layer usually learns a helper pattern."))
    closer_look(snapshot, labels)


def closer_look(snapshot: tr.Snapshot, labels: list[str]) -> None:
    """One head's weights at this step, large, with the arithmetic of a clicked cell."""
    layers, heads = snapshot.weights.shape[:2]
    st.markdown(_("**A closer look**: click a cell of one head for its arithmetic."))
    choices = [(layer, head) for layer in range(layers) for head in range(heads)]
    layer, head = choices[0]
    if len(choices) > 1:
        layer, head = inputs.selectbox(
            _("Head"),
            choices,
            format_func=lambda c: _("Layer {layer}, head {head}", layer=c[0] + 1, head=c[1] + 1),
            key="training_look",
        )
    weights = snapshot.weights[layer, head]  # (T, T)
    page.heatmap(
        weights,
        labels,
        labels,
        kind="weights",
        title=_("Layer {layer}, head {head} at step {step}", layer=layer + 1, head=head + 1, step=snapshot.step),
        key="training_cell",
        explain=snapshot_weight_of(weights),
    )
    st.caption(
        _(
            "A snapshot keeps only the weights, so a row's scores are shown as ln(weight): softmax gives the same row "
            "for any constant added to all its scores. Keys after the query are blocked by the causal mask."
        )
    )


def snapshot_weight_of(weights: torch.Tensor):
    """explain for a snapshot's (T, T) weights: why a future key is 0, else the softmax fraction of the row."""
    mask = causal_mask(weights.shape[0])  # (T, T)
    return lambda i, j: (
        cell_math.explain_masked(mask, i, j, rule="causal")
        if not bool(mask[i, j])
        else cell_math.explain_weight_from_weights(weights[i], j)
    )


CLOSENESS_HELP = N_("Mean over the scored query rows of the weight on the right key: 1 = the right pattern.")


def attention_heatmap(weights: torch.Tensor, labels: list[str], title: str, panel_px: int) -> None:
    """One head's weights as a compact panel."""
    page.heatmap(weights, labels, labels, title=title, compact=True, panel_px=panel_px)


render(inputs.current())
