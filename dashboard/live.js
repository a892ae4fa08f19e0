// The parts of a page that redraw in the browser: Plotly charts updated in place
// (dashboard/charts.py), and the headline, sentences and answers computed ahead that follow
// the sidebar's sliders while they are dragged (dashboard/live.py). One module for both
// components, so that they share one runtime per page (window.__sdwecLive).

// ----------------------------------------------------------------------------- the runtime
// The sidebar's solver sliders, by their widget keys (dashboard/config.py WIDGET_KEYS), in
// the order of a setting's key (dashboard/explorer_answer.py setting_key).
const SLIDERS = ['cfg_lam', 'cfg_beta', 'cfg_gamma', 'cfg_eps'];
const NAMES = ['λ', 'β', 'γ', 'ε'];
// Answers kept per page: a long session's drags never grow the page without bound.
const KEPT = 4000;
const POLL_FIRST_MS = 250;
const POLL_MAX_MS = 4000;
const POLL_FOR_MS = 120000;

const runtime = () => {
  if (window.__sdwecLive) return window.__sdwecLive;
  const rt = {
    answers: new Map(), // family -> Map(setting key -> answer)
    views: new Set(),
    key: null,          // the setting the sliders show now
    released: null,     // the setting the server drew (the one element data carries)
    family: null,
    frame: 0,
    loading: new Map(), // url -> 'done' | 'waiting'
  };
  // The sliders' values as they print them (Streamlit sets aria-valuetext on each render,
  // while a thumb is dragged too); null where the page has no such sliders.
  rt.read = () => {
    const parts = [];
    for (const key of SLIDERS) {
      const input = document.querySelector(`.st-key-${key} input[type="range"]`);
      const text = input && input.getAttribute('aria-valuetext');
      if (!text) return null;
      parts.push(text);
    }
    return parts.join('|');
  };
  rt.shown = () => rt.key || rt.released;
  rt.answer = (family, key) => {
    const of = rt.answers.get(family);
    return of ? of.get(key) : undefined;
  };
  rt.update = () => {
    rt.frame = 0;
    rt.key = rt.read();
    const ahead = rt.key !== null && rt.released !== null && rt.key !== rt.released;
    const missing = ahead && rt.answer(rt.family, rt.key) === undefined;
    document.body.classList.toggle('sdwec-ahead', ahead);
    document.body.classList.toggle('sdwec-missing', missing);
    // Charts first, words last: Plotly measures its text as it draws, which lays out a page
    // whose sentences just changed all over again.
    const views = [...rt.views].sort((a, b) => b.chart - a.chart);
    for (const view of views) {
      if (!view.el.isConnected) rt.views.delete(view);
      else view.follow();
    }
  };
  // In the same task as the slider's own render (the sliders' value is set twice in it):
  // waiting for the next animation frame cost up to a frame before drawing began.
  rt.schedule = () => {
    if (!rt.frame) rt.frame = queueMicrotask(rt.update) || 1;
  };
  rt.store = (family, answers) => {
    let of = rt.answers.get(family);
    if (!of) rt.answers.set(family, of = new Map());
    for (const [key, value] of Object.entries(answers)) of.set(key, value);
    while (of.size > KEPT) of.delete(of.keys().next().value);
    rt.schedule();
  };
  // A file of answers: gzip-compressed JSON (the static route sends files as they are).
  // An empty file is a block the server has not computed yet: asked again, never cached.
  rt.fetch = async (url, done) => {
    const reply = await fetch(url, {cache: done ? 'force-cache' : 'no-store'});
    if (!reply.ok) return null;
    const body = await reply.arrayBuffer();
    if (!body.byteLength) return null;
    const stream = new Blob([body]).stream().pipeThrough(new DecompressionStream('gzip'));
    return new Response(stream).json();
  };
  // Files already written are read at once; the others are polled one at a time in the
  // server's order (it computes them in that order), backing off, for a while.
  rt.load = async (family, files) => {
    const pending = [];
    for (const file of files) {
      if (rt.loading.has(file.url)) continue;
      rt.loading.set(file.url, 'waiting');
      if (file.done) {
        rt.fetch(file.url, true).then((got) => {
          if (got) { rt.loading.set(file.url, 'done'); rt.store(family, got.answers); }
          else rt.loading.delete(file.url);
        }).catch(() => rt.loading.delete(file.url));
      } else pending.push(file.url);
    }
    const started = performance.now();
    let wait = POLL_FIRST_MS;
    while (pending.length && performance.now() - started < POLL_FOR_MS) {
      const url = pending[0];
      let got = null;
      try { got = await rt.fetch(url, false); } catch (err) { got = null; }
      if (got) {
        rt.loading.set(url, 'done');
        rt.store(family, got.answers);
        pending.shift();
        wait = POLL_FIRST_MS;
      } else {
        await new Promise((resolve) => setTimeout(resolve, wait));
        wait = Math.min(POLL_MAX_MS, wait * 1.5);
      }
    }
    for (const url of pending) rt.loading.delete(url);
  };
  new MutationObserver(rt.schedule).observe(document.body, {
    subtree: true, attributes: true, attributeFilter: ['aria-valuetext']});
  window.__sdwecLive = rt;
  return rt;
};

// What a view draws now: the server's own (the released setting, or a page whose sliders
// cannot be read), another setting's part (the element's own variants, else the answer
// computed ahead), or null while that is not here yet.
const choose = (rt, live) => {
  const key = rt.key;
  if (key === null || key === live.released) return {own: true};
  if (live.variants) {
    const part = live.variants[key];
    return part === undefined ? null : {own: false, part};
  }
  const found = rt.answer(live.family, key);
  return found === undefined ? null : {own: false, answer: found};
};

const register = (rt, el, follow) => {
  let view = el.__sdwecView;
  if (!view) {
    view = el.__sdwecView = {el, chart: el.classList.contains('sdwec-chart')};
    rt.views.add(view);
  }
  view.follow = follow;
  follow();
};

// The server's setting, from an element's data: every element of a page has the same.
const released = (rt, live) => {
  rt.released = live.released;
  rt.family = live.family;
};

// ----------------------------------------------------------------------------- charts
const load = (src) => {
  window.__sdwecPlotly = window.__sdwecPlotly || new Promise((resolve, reject) => {
    if (window.Plotly) return resolve(window.Plotly);
    const script = document.createElement('script');
    script.src = src;
    script.onload = () => resolve(window.Plotly);
    script.onerror = () => {
      window.__sdwecPlotly = null;
      reject(new Error('could not load ' + src));
    };
    document.head.appendChild(script);
  });
  return window.__sdwecPlotly;
};

// Charts of one link (the weights chart and the tree-accuracy strip under it: the same
// trees) share their x axis: a zoom, pan or reset of one is applied to the others.  A chart
// being set this way does not pass it on (no echo back and forth).
const linkX = (source, range) => {
  if (!source.__sdwecLink || source.__sdwecFollowing) return;
  for (const gd of document.querySelectorAll('div.sdwec-chart')) {
    if (gd === source || gd.__sdwecLink !== source.__sdwecLink || !gd.layout) continue;
    const now = gd.layout.xaxis && gd.layout.xaxis.range;
    if (now && +now[0] === +range[0] && +now[1] === +range[1]) continue;
    gd.__sdwecFollowing = true;
    window.Plotly.relayout(gd, {'xaxis.range': [+range[0], +range[1]]})
      .finally(() => { gd.__sdwecFollowing = false; });
  }
};

// Another setting's figure: the spec with that setting's changing traces and layout keys
// (dashboard/explorer_answer.py with_part).
const withPart = (figure, part) => ({
  data: figure.data.map((trace) => part.traces[trace.uid] || trace),
  layout: Object.fromEntries(Object.entries(Object.assign({}, figure.layout, part.layout))
    .filter(([k, v]) => !(k in part.layout && v === null))),
  frames: figure.frames,
});

const drawFigure = (gd, data, figure) => {
  // One view (a dataset, an axis scale): Plotly keeps the reader's legend choices across
  // its figures, matching traces by uid, else by position (the names carry counts that
  // change with λ). Not the zoom: a new figure's curves may lie outside the old one.
  if (data.view != null && figure.layout.uirevision === undefined) {
    const draw = gd.__sdwecDraws = (gd.__sdwecDraws || 0) + 1;
    figure.layout.uirevision = data.view;
    const axes = Object.keys(figure.layout).filter((k) => /^[xy]axis[0-9]*$/.test(k));
    for (const axis of new Set(['xaxis', 'yaxis', ...axes])) {
      figure.layout[axis] = Object.assign({}, figure.layout[axis], {uirevision: draw});
    }
  }
  // A fixed size, the chart's width measured once and again only when it changes: Plotly's
  // autosize measured the page at every draw, a tenth of a draw while a slider moves.
  figure.layout.height = data.height;
  gd.__sdwecWidth = gd.__sdwecWidth || gd.clientWidth;
  if (gd.__sdwecWidth) {
    figure.layout.width = gd.__sdwecWidth;
    figure.layout.autosize = false;
  } else {  // not laid out yet (a closed expander): Plotly sizes it, the observer follows
    delete figure.layout.width;
    figure.layout.autosize = true;
  }
  if (!gd.__sdwecResize) {
    gd.__sdwecResize = new ResizeObserver(() => {
      const width = gd.clientWidth;
      if (width && width !== gd.__sdwecWidth && gd.layout) {
        gd.__sdwecWidth = width;
        window.Plotly.relayout(gd, {width, autosize: false});
      }
    });
    gd.__sdwecResize.observe(gd);
  }
  const Plotly = window.Plotly;
  // A double-click or the reset button brings back the axes of the figure on screen: its
  // own ranges (copied: Plotly keeps the reader's zoom in the layout object it is given),
  // or autorange where it sets none.
  gd.__sdwecRanges = {};
  for (const [axis, value] of Object.entries(figure.layout)) {
    if (/^[xy]axis[0-9]*$/.test(axis) && value && value.autorange !== true &&
        Array.isArray(value.range)) gd.__sdwecRanges[axis] = value.range.slice();
  }
  if (!gd.__sdwecConfig) {
    gd.__sdwecHome = () => {
      const update = {};
      for (const axis of Object.keys(gd.layout).filter((k) => /^[xy]axis[0-9]*$/.test(k))) {
        const range = gd.__sdwecRanges[axis];
        if (range) update[axis + '.range'] = range.slice();
        else update[axis + '.autorange'] = true;
      }
      return Plotly.relayout(gd, update);
    };
    // Made once per div: a config that changes makes Plotly.react draw the chart anew.
    gd.__sdwecConfig = Object.assign({}, data.config, {modeBarButtonsToAdd: [
      {name: 'resetAxes', title: 'Reset axes', icon: Plotly.Icons.home,
       click: gd.__sdwecHome}]});
  }
  gd.__sdwecLink = data.link;
  return Plotly.react(gd, {data: figure.data, layout: figure.layout, frames: figure.frames,
                           config: gd.__sdwecConfig}).then(() => {
    if (!gd.__sdwecDoubleClicks) {
      gd.__sdwecDoubleClicks = true;
      gd.on('plotly_doubleclick', gd.__sdwecHome);
      gd.on('plotly_relayout', (event) => {
        const range = event && (event['xaxis.range'] ||
          ('xaxis.range[0]' in event ? [event['xaxis.range[0]'], event['xaxis.range[1]']]
                                     : null));
        if (range) linkX(gd, range);
      });
    }
    // A new figure's x axis (its zoom gone) is the linked charts' too.
    if (gd.layout.xaxis && Array.isArray(gd.layout.xaxis.range)) linkX(gd, gd.layout.xaxis.range);
  });
};

// ----------------------------------------------------------------------------- views
// A figure's arrays as plain numbers: Plotly's JSON carries numpy arrays as base64
// ({dtype, bdata}).
const TYPED = {f8: Float64Array, f4: Float32Array, i4: Int32Array, u4: Uint32Array,
               i2: Int16Array, u2: Uint16Array, i1: Int8Array, u1: Uint8Array};
const numbers = (values) => {
  if (!values || Array.isArray(values)) return values || [];
  const bytes = Uint8Array.from(atob(values.bdata), (c) => c.charCodeAt(0));
  return Array.from(new TYPED[values.dtype](bytes.buffer));
};

// Another figure with some of each trace's attributes (and some layout keys) replaced; a
// null removes one (dashboard/charts.py with_attributes).
const withAttributes = (figure, diff) => ({
  data: figure.data.map((trace) => {
    const attrs = diff.traces[trace.uid];
    if (!attrs) return trace;
    const out = Object.assign({}, trace, attrs);
    for (const [k, v] of Object.entries(attrs)) if (v === null) delete out[k];
    return out;
  }),
  layout: Object.fromEntries(Object.entries(Object.assign({}, figure.layout, diff.layout))
    .filter(([k, v]) => !(k in diff.layout && v === null))),
  frames: figure.frames,
});

// The Frontier's views (dashboard/frontier_view.py): the accuracy on test or validation,
// trees used or sparsity (1 − trees / l) on x, and the cross at the sliders' λ.
const frontierFigure = (figure, view, shown, cross) => {
  let out = view.y === 'validation' ? withAttributes(figure, shown.validation) : figure;
  out = {data: out.data.map((trace) => trace.uid !== shown.cross ? trace : Object.assign(
    {}, trace, {x: cross ? [cross.x] : [], y: cross ? [cross[view.y]] : []})),
         layout: Object.assign({}, out.layout, {xaxis: shown.axes[view.x]}), frames: out.frames};
  if (view.x === 'sparsity') {
    out.data = out.data.map((trace) => trace.x === undefined ? trace : Object.assign(
      {}, trace, {x: numbers(trace.x).map((x) => 1 - x / shown.l)}));
  }
  return out;
};

// Buttons above a chart that switch its view in the page (no server run).
const drawSwitches = (parentElement, gd, switches, redraw) => {
  let bar = parentElement.querySelector('div.sdwec-switches');
  if (!bar) {
    bar = document.createElement('div');
    bar.className = 'sdwec-switches';
    parentElement.style.position = 'relative';
    parentElement.insertBefore(bar, gd);
  }
  const view = gd.__sdwecChoice = gd.__sdwecChoice ||
    Object.fromEntries(switches.map((s) => [s.name, s.options[0][0]]));
  bar.innerHTML = switches.map((s) => `<span class="sdwec-switch" role="group" aria-label="${escape(s.label)}">` +
    `<span class="sdwec-switch-label">${escape(s.label)}</span>` + s.options.map(([value, text]) =>
      `<button type="button" data-name="${s.name}" data-value="${value}" ` +
      `aria-pressed="${view[s.name] === value}">${escape(text)}</button>`).join('') +
    '</span>').join('');
  bar.onclick = (event) => {
    const button = event.target.closest('button[data-name]');
    if (!button) return;
    view[button.dataset.name] = button.dataset.value;
    for (const other of bar.querySelectorAll(`button[data-name="${button.dataset.name}"]`)) {
      other.setAttribute('aria-pressed', String(other === button));
    }
    redraw();
  };
};

// Draws are chained per chart and only the newest wanted figure is drawn, so a burst of
// moves never draws a stale figure last.  Errors are shown in the chart's place, not thrown.
const drawChart = ({data, parentElement, setTriggerValue}) => {
  const rt = runtime();
  let gd = parentElement.querySelector('div.sdwec-chart');
  if (!gd) {
    gd = document.createElement('div');
    gd.className = 'sdwec-chart';
    gd.style.width = '100%';
    parentElement.appendChild(gd);
  }
  gd.style.minHeight = data.height + 'px';
  // A click on a point is sent to the server as a trigger (once per chart div).
  gd.__sdwecClick = data.click ? setTriggerValue : null;
  const live = data.live;
  if (live) released(rt, live);
  // While a slider moves, a chart out of sight waits until it comes into view (or the
  // slider is released): each step then redraws only what can be seen.
  if (live && !gd.__sdwecSight) {
    gd.__sdwecSight = new IntersectionObserver((entries) => {
      gd.__sdwecVisible = entries[entries.length - 1].isIntersecting;
      if (gd.__sdwecVisible && gd.__sdwecLater) {
        const later = gd.__sdwecLater;
        gd.__sdwecLater = null;
        later();
      }
    }, {rootMargin: '50px'});
    gd.__sdwecSight.observe(gd);
  }
  let parsed = null;
  const base = () => (parsed = parsed || JSON.parse(data.spec));
  const shown = data.views;
  if (shown) released(rt, shown);
  const follow = () => {
    let want;
    if (shown) {
      // The view chosen with the buttons, and the cross at the sliders' λ while β, γ and ε
      // are the sweep's (else the chart waits for the server).
      const key = rt.key === null ? shown.released : rt.key;
      const same = key.split('|').slice(1).join('|') === shown.released.split('|').slice(1).join('|');
      gd.classList.toggle('sdwec-waiting', !same);
      if (!same) return;
      const cross = shown.crosses[key] || null;
      const view = gd.__sdwecChoice;
      want = {id: `${shown.hash}/${view.x}/${view.y}/${key}`,
              figure: () => frontierFigure(base(), view, shown, cross)};
    }
    const chosen = shown ? {own: false} : live ? choose(rt, live) : {own: true};
    if (!shown) gd.classList.toggle('sdwec-waiting', chosen === null);
    if (chosen === null) return; // not computed yet: dimmed until the server draws it
    if (shown) {
      // (the view's figure, chosen above)
    } else if (chosen.own) {
      gd.__sdwecLater = null;
      want = {id: live ? `${live.still}/${live.hash}` : data.spec, figure: () => JSON.parse(data.spec)};
    } else {
      if (gd.__sdwecVisible === false) {
        gd.__sdwecLater = follow;
        return;
      }
      const part = chosen.part || chosen.answer.figures[live.name];
      want = {id: `${live.still}/${part.hash}`, figure: () => withPart(base(), part)};
    }
    gd.__sdwecWanted = want.id;
    const queue = gd.__sdwecQueue || Promise.resolve();
    gd.__sdwecQueue = queue.then(() => load(data.src)).then(() => {
      if (gd.__sdwecWanted !== want.id || gd.__sdwecDrawn === want.id) return null;
      gd.__sdwecDrawn = want.id;
      return drawFigure(gd, data, want.figure());
    }).then(() => {
      if (gd.__sdwecClick && !gd.__sdwecClicks) {
        gd.__sdwecClicks = true;
        gd.on('plotly_click', (event) => {
          const point = event && event.points && event.points[0];
          if (point && gd.__sdwecClick) {
            gd.__sdwecClick('click', {customdata: point.customdata ?? null,
                                      trace: point.data.name ?? null});
          }
        });
      }
    }).catch((err) => {
      gd.__sdwecDrawn = null;
      gd.textContent = 'This chart could not be drawn (' + err.message + '). Reload the page.';
    });
  };
  if (data.switches) drawSwitches(parentElement, gd, data.switches, follow);
  register(rt, gd, follow);
};

// ----------------------------------------------------------------------------- words
const drawText = ({data, parentElement}) => {
  const rt = runtime();
  let box = parentElement.querySelector('div.sdwec-text');
  if (!box) {
    box = document.createElement('div');
    parentElement.appendChild(box);
  }
  box.className = `sdwec-text sdwec-${data.style}`;
  const live = data.live;
  if (live) released(rt, live);
  const follow = () => {
    const chosen = live ? choose(rt, live) : {own: true};
    box.classList.toggle('sdwec-waiting', chosen === null);
    if (chosen === null) return;
    const html = chosen.own ? data.html : (chosen.part ?? chosen.answer.text[live.name]);
    if (box.__sdwecHtml !== html) {
      box.__sdwecHtml = html;
      box.innerHTML = html;
      box.hidden = !html;
    }
  };
  register(rt, box, follow);
};

const escape = (text) => String(text).replace(/[&<>"']/g, (c) => (
  {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c]));

const ARROWS = {up: '↑', down: '↓', off: ''};

// The four numbers of a setting with their labels; the comparison with bagging under the
// first.  Where the sliders show a setting not computed yet, a line says so.
const drawHeadline = ({data, parentElement}) => {
  const rt = runtime();
  let box = parentElement.querySelector('div.sdwec-headline');
  if (!box) {
    box = document.createElement('div');
    box.className = 'sdwec-headline';
    parentElement.appendChild(box);
  }
  box.classList.toggle('sdwec-fine', !!data.fine);
  const live = data.live;
  released(rt, live);
  if (data.files && data.files.length) rt.load(live.family, data.files);
  const follow = () => {
    const chosen = choose(rt, live);
    const missing = chosen === null;
    const values = missing || chosen.own ? data.values : (chosen.part || chosen.answer.headline);
    const id = JSON.stringify([values, missing && rt.key]);
    if (box.__sdwecId === id) return;
    box.__sdwecId = id;
    const cells = data.labels.map(([name, label, help]) => {
      const [text, colour, arrow] = name === 'test' ? values.delta : [null];
      const chip = text === null ? '' :
        `<span class="sdwec-delta sdwec-${colour}">${ARROWS[arrow] ? ARROWS[arrow] + ' ' : ''}${escape(text)}</span>` +
        ` <span class="sdwec-vs">vs bagging</span>`;
      const tip = help ? ` <span class="sdwec-help" title="${escape(help)}">?</span>` : '';
      return `<div class="sdwec-metric" data-name="${name}"><div class="sdwec-label">` +
        `${escape(label)}${tip}</div><div class="sdwec-value">${escape(values[name])}</div>` +
        `${chip}</div>`;
    });
    let note = '';
    if (missing) {
      const now = rt.key.split('|');
      const drawn = live.released.split('|');
      const moved = now.map((v, i) => v !== drawn[i] ? `${NAMES[i]} = ${v}` : null)
        .filter((v) => v);
      note = `<div class="sdwec-missing-note" role="status">Not computed yet: ` +
        `${escape(moved.join(', '))}. Release the slider and the server computes it; the ` +
        `page shows ${escape(moved.map((m) => {
          const i = NAMES.indexOf(m.split(' ')[0]);
          return `${NAMES[i]} = ${drawn[i]}`;
        }).join(', '))} until then.</div>`;
    }
    box.innerHTML = `<div class="sdwec-metrics">${cells.join('')}</div>${note}`;
  };
  register(rt, box, follow);
};

// ----------------------------------------------------------------------------- answers
// The answers computed ahead for this page: files the runtime reads (or waits for).
const attachAhead = ({data}) => {
  const rt = runtime();
  released(rt, data.live);
  rt.load(data.live.family, data.files);
  rt.schedule();
};

export default function (args) {
  const kind = (args.data && args.data.kind) || 'chart';
  if (kind === 'chart') return drawChart(args);
  if (kind === 'text') return drawText(args);
  if (kind === 'headline') return drawHeadline(args);
  if (kind === 'ahead') return attachAhead(args);
  return undefined;
}
