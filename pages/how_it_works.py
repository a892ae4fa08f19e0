"""How it works: the relaxations behind SDWEC, live, one fragment per idea."""

import streamlit as st

from dashboard.charts import plotly_chart
from dashboard.config import BETA_RANGE, EPS_GRID, GAMMA_RANGE
from dashboard.docs import show_doc_section
from dashboard.guard import guard
from dashboard.sidebar import page_setup
from sdwec import plots, teaching
from sdwec.formatting import significant

#: γ of section 2's default: the paper's Figure 2 uses 10, where the rounding is hard to see.
FIGURE2_GAMMA = 3.0
#: Controls that add a curve (a multiselect): their prompts say "add", not "move".
ADDS = {"how_abs_eps"}
DERIVATION = "The derivation, and the figure in numbers"

config = page_setup("How it works", trains=False)
if config is None:
    st.stop()

st.title("How SDWEC works")
st.caption(
    "The sliders on this page are its own: they redraw only this page's figures. Its β, γ "
    "and ε start from the sidebar's values each time the page opens (section 2 starts from "
    f"γ = {FIGURE2_GAMMA:g} and ε = 0.1 and 1 instead); moving the sidebar's sliders while "
    "here does not move them.")
st.markdown(
    "SDWEC looks for **non-negative, sparse weights** `w` for the `l` trees of an ensemble so "
    "that the weighted vote `sgn(Hw)` reproduces the validation labels `y` (row `s` of `H`: "
    "the trees' ±1 votes on validation row `s`, one of `m`). It would like to minimise (eq. 4)")
st.latex(r"J(w) = \frac{\lambda}{m}\sum_{s=1}^{m}\big(\operatorname{sgn}(H_s w) - y_s\big)^2"
         r" + \frac{1}{l}\lVert w\rVert_1 + \frac{\beta}{l}\sum_{r=1}^{l}\max(-w_r, 0)")
st.markdown(
    "The terms count mistakes, switch trees off, keep weights non-negative. `sgn`, `|·|` and "
    "`max` make it jumpy, so each is replaced by a smooth stand-in that is right **near the "
    "current guess ŵ**, and the problem is solved again around each new guess. Each section "
    "below: **move this, watch that**; the derivation is in the box under its figure.")


def _eps_slider(key, label="ε"):
    return st.select_slider(label, EPS_GRID, value=config.eps, key=key,
                            format_func=lambda v: f"{v:g}")


def _prompts(section):
    """The section's prompts (:data:`sdwec.teaching.PROMPTS`), one line each."""
    lines = []
    for p in teaching.PROMPTS[section]:
        if f"how_{section}_{p.control}" in ADDS:
            move = f"Add a {'larger' if p.up else 'smaller'} {p.name}"
        else:
            move = f"Move {p.name} {'up' if p.up else 'down'}"
        lines.append(f"- **{move}**: watch {p.watch} {p.does}.")
    st.markdown("\n".join(lines))


@st.fragment
def sign_section():
    st.subheader("1 · A convex stand-in for the sign (eq. 6)")
    st.latex(r"\operatorname{sgn}(H_s w) \approx \frac{H_s w}{|H_s\hat w| + \epsilon}"
             r" = S_s H_s w")
    left, right = st.columns([2, 3])
    with left:
        eps = _eps_slider("how_sign_eps")
        points = st.multiselect("Expansion points H_s ŵ", [-2.0, -1.0, -0.5, 0.5, 1.0, 2.0],
                                default=[0.5, 2.0], key="how_sign_points")
        _prompts("sign")
    with right, guard("the sign plot"):
        plotly_chart(plots.sign_relaxation(points, eps), key="how_sign_chart")
    with st.expander(DERIVATION):
        st.latex(r"S_s H_s w = \pm 1 \iff H_s w = \pm\left(|H_s\hat w| + \epsilon\right),"
                 r"\qquad S_s H_s \hat w = \pm\left(1 - \frac{\epsilon}{|H_s\hat w| + \epsilon}"
                 r"\right)")
        st.markdown(
            "Around a row where the current ensemble scores `H_s ŵ` (ŵ: the weights of the "
            "previous iteration), the step of `sgn` is replaced by a straight line through "
            "the origin with slope S_s. It is linear in `w`, so the fidelity term becomes a "
            "least-squares term. As the line above says, it reaches ±1 **ε beyond** the "
            "expansion point, and at the point itself it falls short of ±1.")
        st.caption(teaching.sign_caption(points, eps))


@st.fragment
def abs_section():
    st.subheader("2 · |w| by an adaptive log-sum-exp (eq. 7, Figure 2)")
    st.latex(r"|w_r| \approx \frac{1}{\gamma_r}\log\!\left(e^{-\gamma_r w_r}"
             r" + e^{\gamma_r w_r}\right),\qquad"
             r" \gamma_r = \frac{\gamma}{|\hat w_r| + \epsilon}")
    left, right = st.columns([2, 3])
    with left:
        gamma = st.slider("γ", *GAMMA_RANGE[:2], value=FIGURE2_GAMMA, step=GAMMA_RANGE[2],
                          format="%g", key="how_abs_gamma")
        eps_values = st.multiselect("ε", EPS_GRID, default=[0.1, 1.0], key="how_abs_eps",
                                    format_func=lambda v: f"{v:g}")
        follow = st.toggle("ŵ follows w (Figure 2)", value=True, key="how_abs_follow")
        w_hat = None if follow else st.slider("ŵ", -2.0, 2.0, 1.0, 0.05, key="how_abs_what")
        _prompts("abs")
    with right, guard("the |w| plot"):
        plotly_chart(plots.abs_approximation(gamma, eps_values, w_hat=w_hat),
                     key="how_abs_chart")
    with st.expander(DERIVATION):
        st.markdown(
            "The log-sum-exp is a smooth `max(-w, w)`; its sharpness γ would overflow `exp` "
            "for large |w|, so SDWEC scales it by the current weight: large weights get a "
            "gentler curve, weights near zero a sharp one. *ŵ follows w* draws the paper's "
            "Figure 2; a fixed ŵ draws the curve one iteration actually uses. The paper's "
            "Figure 2 uses γ = 10, where the gap is hard to see.")
        gaps = ", ".join(f"{significant(teaching.abs_gap_at_zero(gamma, e, w_hat))} for "
                         f"ε = {e:g}" for e in sorted(eps_values))
        st.caption("Look at w = 0: the smooth curve sits (|ŵ| + ε)·log 2 / γ above the corner "
                   "of |w|" + (f" (here, γ = {gamma:g}: {gaps})" if gaps else "")
                   + ", so a larger ε or a smaller γ rounds the corner more.")


@st.fragment
def penalty_section():
    st.subheader("3 · The non-negativity penalty and the threshold it implies (eq. 8)")
    st.latex(r"\beta\max(-w_r, 0) \approx \frac{\beta}{\gamma_r}\log\!\left("
             r"e^{-\gamma_r w_r} + 1\right) = P(w_r)")
    left, right = st.columns([2, 3])
    with left:
        beta = st.slider("β", *BETA_RANGE[:2], value=config.beta,
                         step=BETA_RANGE[2], format="%g", key="how_pen_beta")
        gamma = st.slider("γ", *GAMMA_RANGE[:2], value=config.gamma,
                          step=GAMMA_RANGE[2], format="%g", key="how_pen_gamma")
        eps = _eps_slider("how_pen_eps")
        _prompts("pen")
    with right:
        with guard("the penalty plot"):
            plotly_chart(plots.penalty_threshold(beta, gamma, eps), key="how_pen_chart")
        st.markdown("Where the threshold goes is exact; the number of trees kept does not "
                    "simply follow it, because the weights move too (measured: in the box "
                    "below).")
    with st.expander(DERIVATION):
        st.markdown(
            "The penalty is large for negative weights and fades for positive ones. After the "
            "last iteration, Algorithm 1 (line 15) sets to zero every weight at or below the "
            "threshold t where P falls to 10⁻³: such a weight is too small for the smooth "
            "cost to tell it from zero. P depends on each weight's γ_r = γ/(|ŵ_r| + ε); with "
            "the *paper* rule t is read at the sharpest of them, **g = γ/ε** (γ_r at ŵ_r = 0), "
            "the value the plot uses.")
        cut = teaching.penalty_cut(beta, gamma, eps)
        st.caption(f"{teaching.penalty_caption(cut)} {teaching.THRESHOLD_MOVES} On the "
                   f"shipped datasets, at several λ: {teaching.EFFECTS['eps'].text} "
                   f"{teaching.EFFECTS['beta'].text} {teaching.EFFECTS['gamma'].text}")
    show_doc_section("algorithm.md", "Readings of ambiguities",
                     label="How this project reads line 15, and other readings of the paper "
                           "(docs/algorithm.md)")


@st.fragment
def taylor_section():
    st.subheader("4 · A quadratic model, then one linear solve per iteration")
    st.latex(r"\frac{1}{\gamma_r}\log\!\left(e^{-\gamma_r w}+e^{\gamma_r w}\right) + P(w)"
             r" \approx A_r + B_r w + C_r w^2")
    left, right = st.columns([2, 3])
    with left:
        w_hat = st.slider("ŵ", 0.0, 3.0, 1.0, 0.05, key="how_tay_what")
        beta = st.slider("β", *BETA_RANGE[:2], value=config.beta,
                         step=BETA_RANGE[2], format="%g", key="how_tay_beta")
        gamma = st.slider("γ", *GAMMA_RANGE[:2], value=config.gamma,
                          step=GAMMA_RANGE[2], format="%g", key="how_tay_gamma")
        eps = _eps_slider("how_tay_eps")
        _prompts("tay")
    with right:
        with guard("the Taylor plot"):
            plotly_chart(plots.taylor_model(w_hat, beta, gamma, eps), key="how_tay_chart")
        st.markdown("**Unlike the paper.** It says the costs \"decrease steadily\" (its "
                    "Figure 3), but where the model runs below the cost, a step that lowers "
                    "the model can raise the cost, and on real pools the costs do rise: the "
                    "Explorer's cost chart marks every rise.")
    with st.expander(DERIVATION):
        st.latex(r"\left(\frac{2\lambda}{m}(SH)^\top SH + \frac{2}{l}(C + I)\right)w"
                 r" = \frac{2\lambda}{m}(SH)^\top y + \frac{2\hat w - v_B}{l}")
        st.markdown(
            "The smooth per-weight terms are replaced by their second-order Taylor model "
            "around ŵ: `A_r`, `B_r`, `C_r` are weight r's constant, linear and quadratic "
            "coefficients. In the linear system above, `v_B` is the vector of the `B_r`, `C` "
            "the diagonal matrix of the `C_r`, `S` the diagonal matrix of the `S_s` of "
            "section 1, `I` the identity. A slow-step term (w − ŵ)²/l keeps the new w close "
            "to ŵ where the models are accurate. The cost is then a strictly convex "
            "quadratic: one linear system per iteration, then negative weights are set to 0. "
            "Start from w = 1, repeat k times, threshold.")
        st.caption(teaching.taylor_caption(teaching.taylor_view(w_hat, beta, gamma, eps)))
    show_doc_section("algorithm.md", "When the costs rise",
                     label="Why the costs can rise (docs/algorithm.md)")


with guard("the teaching page"):
    sign_section()
    abs_section()
    penalty_section()
    taylor_section()
