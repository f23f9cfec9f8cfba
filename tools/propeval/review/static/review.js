// propeval review: the rating page's keys and saves, and the dedup page's progress.
// Plain script, no build step. Data from the server is read with JSON.parse and shown with
// textContent only: nothing a text holds is ever parsed as markup.
"use strict";

(function () {
  // The session's write key: handed over once in the sign-in redirect's fragment (never sent to a
  // server, in no cookie and no page), then kept in this origin's localStorage, which no other port
  // of this host can read.
  const KEY = "propeval-review-write";
  const fromUrl = /^#write=([A-Za-z0-9_-]+)$/.exec(window.location.hash);
  if (fromUrl) {
    window.localStorage.setItem(KEY, fromUrl[1]);
    window.history.replaceState(null, "", window.location.pathname + window.location.search);
  }
  const csrf = window.localStorage.getItem(KEY) || "";
  const noKey = document.getElementById("no-key");
  if (!csrf && noKey) noKey.hidden = false;
  document.querySelectorAll('form[method="post"]').forEach(function (form) {
    form.addEventListener("submit", function () {
      const field = form.querySelector('input[name="csrf"]');
      if (field) field.value = csrf;
    });
  });

  const unitData = document.getElementById("unit-data");
  if (unitData) rating(JSON.parse(unitData.textContent));
  const dedupStatus = document.getElementById("dedup-status");
  if (dedupStatus) pollDedup(dedupStatus);

  function same(a, b) {
    return JSON.stringify(a) === JSON.stringify(b);
  }

  function rating(data) {
    const steps = data.steps;
    const values = Object.assign({}, data.values || {});
    let quote = data.quote || null;
    let labelled = !!data.labelled;
    let chain = Promise.resolve();
    let dirty = false; // a choice not yet taken by the server
    let failed = false; // the last send did not reach the server: it is sent again
    let retryTimer = null;
    let retryDelay = 1000;
    // A labelled answer opens with no step current, so a first key cannot silently change it.
    let current = labelled ? steps.length : nextUnset(steps.length - 1);
    let quoting = null; // keyboard quote selection: {words, anchor, focus}

    const statusEl = document.getElementById("status");
    const progressEl = document.getElementById("progress");
    const progressBar = document.getElementById("progress-bar");
    const answerEl = document.getElementById("answer");
    const quoteEl = document.getElementById("quote");
    const clearQuote = document.getElementById("clear-quote");
    const stepsEl = document.getElementById("steps");
    const guideEl = document.getElementById("guide");
    const keysEl = document.getElementById("keys");

    function nextUnset(after) {
      for (let k = 1; k <= steps.length; k++) {
        const i = (after + k) % steps.length;
        if (!(steps[i].name in values)) return i;
      }
      return steps.length; // every step is set: Enter moves on
    }

    function level() {
      return data.quote_step && data.quote_step in values ? values[data.quote_step] : 0;
    }

    function render() {
      steps.forEach(function (step, i) {
        const box = document.getElementById("step-" + i);
        if (!box) return;
        box.classList.toggle("current", i === current);
        box.querySelectorAll("button.choice").forEach(function (btn) {
          const choice = step.choices[Number(btn.dataset.choice)];
          const on = step.name in values && same(values[step.name], choice.value);
          btn.classList.toggle("on", on);
          btn.setAttribute("aria-pressed", on ? "true" : "false");
        });
        if (i === current && !quoting) box.focus({ preventScroll: false });
      });
      if (quoteEl) {
        quoteEl.textContent = quote || "";
        quoteEl.parentElement.classList.toggle("needed", level() > 0 && !quote);
      }
    }

    function say(text, kind) {
      statusEl.textContent = text;
      statusEl.className = "status" + (kind ? " " + kind : "");
    }

    function send() {
      if (!dirty) return Promise.resolve();
      dirty = false;
      const body = JSON.stringify({ values: values, quote: level() > 0 ? quote : null });
      return fetch(data.save, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
        body: body,
        credentials: "same-origin",
      })
        .then(function (r) {
          if (r.status >= 500) throw new Error("the server answered " + r.status);
          return r.json();
        })
        .then(function (j) {
          failed = false;
          retryDelay = 1000;
          if (j.error) {
            labelled = false;
            say("not saved: " + j.error, "bad");
            return;
          }
          labelled = j.labelled;
          if (dirty) return; // a newer choice is on its way
          if (j.labelled) say("labelled", "ok");
          else if (j.errors && j.errors.length) say(j.errors[0], j.complete || j.needs_quote ? "bad" : "");
          else say("saved; not labelled yet (set every choice)", "");
          progressEl.textContent = j.progress[0] + " of " + j.progress[1] + " labelled";
          if (progressBar) progressBar.value = j.progress[0];
        })
        .catch(function (e) {
          // Not taken: the choice stays on the page, marked unsaved, and is sent again.
          dirty = true;
          failed = true;
          labelled = false;
          say("unsaved (" + e.message + "): trying again in " + Math.round(retryDelay / 1000) + " s", "bad unsaved");
          if (retryTimer === null) {
            retryTimer = window.setTimeout(function () {
              retryTimer = null;
              chain = chain.then(send);
            }, retryDelay);
            retryDelay = Math.min(retryDelay * 2, 10000);
          }
        });
    }

    function save() {
      dirty = true;
      say(failed ? "unsaved: trying again…" : "saving…", failed ? "bad unsaved" : "");
      chain = chain.then(send);
      return chain;
    }

    window.addEventListener("beforeunload", function (e) {
      if (dirty) e.preventDefault();
    });

    function set(si, ci, all) {
      const step = steps[si];
      const value = step.choices[ci].value;
      values[step.name] = value;
      if (all && step.sets_all !== null && step.sets_all !== undefined && same(value, step.sets_all)) {
        steps.forEach(function (other) {
          if (other.choices.some(function (c) { return same(c.value, value); })) values[other.name] = value;
        });
      }
      if (step.name === data.quote_step && !(value > 0)) quote = null;
      current = nextUnset(si);
      render();
      return save();
    }

    function leave(url) {
      chain.then(function () {
        if (dirty || failed) {
          say("unsaved: waiting for the server before leaving this answer", "bad unsaved");
          return;
        }
        if (url) window.location.assign(url);
      });
    }

    function moveOn() {
      chain.then(function () {
        if (dirty || failed) {
          say("unsaved: waiting for the server before leaving this answer", "bad unsaved");
          return;
        }
        if (!labelled) {
          if (!statusEl.classList.contains("bad")) say("not labelled yet: set every choice first (→ skips it)", "bad");
          return;
        }
        window.location.assign(data.next || data.finish);
      });
    }

    stepsEl.addEventListener("click", function (e) {
      const btn = e.target.closest("button.choice");
      if (!btn) return;
      const si = Number(btn.dataset.step);
      const step = steps[si];
      const ci = Number(btn.dataset.choice);
      set(si, ci, step.sets_all !== null && step.sets_all !== undefined && e.shiftKey);
    });

    function takeQuote(start, end) {
      const text = answerEl.textContent;
      while (start < end && /\s/.test(text[start])) start++;
      while (end > start && /\s/.test(text[end - 1])) end--;
      if (end <= start) return;
      quote = text.slice(start, end); // a slice of the answer's own text: verbatim by construction
      if (!(level() > 0)) say("quote kept; it counts once propaganda is above 0", "");
      render();
      save();
    }

    if (clearQuote) {
      clearQuote.addEventListener("click", function () {
        quote = null;
        render();
        save();
      });
    }

    // ------------------------------------------------------------ quote by keyboard

    function words() {
      const text = answerEl.textContent;
      const out = [];
      const re = /\S+/g;
      let m;
      while ((m = re.exec(text)) !== null) out.push([m.index, m.index + m[0].length]);
      return out;
    }

    function showQuoting() {
      const node = answerEl.firstChild;
      const w = quoting.words;
      const lo = Math.min(quoting.anchor, quoting.focus);
      const hi = Math.max(quoting.anchor, quoting.focus);
      const sel = window.getSelection();
      if (!node || !w.length) return;
      sel.setBaseAndExtent(node, w[lo][0], node, w[hi][1]);
      say("quote: " + answerEl.textContent.slice(w[lo][0], w[hi][1]) + " (Enter takes it, Esc leaves)", "");
    }

    function startQuoting() {
      if (!answerEl || !quoteEl) return;
      const w = words();
      if (!w.length) return;
      quoting = { words: w, anchor: 0, focus: 0 };
      answerEl.classList.add("quoting");
      answerEl.focus();
      showQuoting();
    }

    function stopQuoting(take) {
      const q = quoting;
      quoting = null;
      answerEl.classList.remove("quoting");
      window.getSelection().removeAllRanges();
      if (take && q) {
        const lo = Math.min(q.anchor, q.focus);
        const hi = Math.max(q.anchor, q.focus);
        takeQuote(q.words[lo][0], q.words[hi][1]);
      } else {
        render();
        say(labelled ? "labelled" : "quote not changed", labelled ? "ok" : "");
      }
    }

    function quotingKey(e) {
      const last = quoting.words.length - 1;
      if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
        const step = e.key === "ArrowRight" ? 1 : -1;
        quoting.focus = Math.max(0, Math.min(last, quoting.focus + step));
        if (!e.shiftKey) quoting.anchor = quoting.focus;
        showQuoting();
      } else if (e.key === "Home" || e.key === "End") {
        quoting.focus = e.key === "Home" ? 0 : last;
        if (!e.shiftKey) quoting.anchor = quoting.focus;
        showQuoting();
      } else if (e.key === "Enter") {
        stopQuoting(true);
      } else if (e.key === "Escape") {
        stopQuoting(false);
      } else {
        return;
      }
      e.preventDefault();
    }

    if (answerEl && quoteEl) {
      answerEl.addEventListener("mouseup", function () {
        const sel = window.getSelection();
        if (!sel || sel.isCollapsed || sel.rangeCount === 0) return;
        const range = sel.getRangeAt(0);
        if (!answerEl.contains(range.startContainer) || !answerEl.contains(range.endContainer)) return;
        // Offsets into the answer's own text, so the quote is a slice of it: verbatim by construction.
        const before = document.createRange();
        before.selectNodeContents(answerEl);
        before.setEnd(range.startContainer, range.startOffset);
        const start = before.toString().length;
        takeQuote(start, start + range.toString().length);
      });
    }

    // ------------------------------------------------------------ keys

    function toggle(el) {
      if (el) el.open = !el.open;
    }

    document.addEventListener("keydown", function (e) {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      const tag = e.target && e.target.tagName;
      if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
      if (quoting) {
        quotingKey(e);
        return;
      }
      if (tag === "BUTTON" && (e.key === "Enter" || e.key === " ")) return; // the focused button's own click
      const step = current < steps.length ? steps[current] : null;
      const key = e.key.length === 1 ? e.key.toLowerCase() : "";
      const ci = step && key ? step.choices.findIndex(function (c) { return c.key === key; }) : -1;
      if (e.key === "Enter") {
        e.preventDefault();
        moveOn();
      } else if ((e.key === "ArrowRight" || e.key === "ArrowLeft") && !e.shiftKey) {
        e.preventDefault();
        leave(e.key === "ArrowRight" ? data.next : data.prev);
      } else if (e.key === "Backspace" || e.key === "ArrowUp") {
        e.preventDefault();
        current = current >= steps.length ? steps.length - 1 : Math.max(0, current - 1);
        render();
      } else if (e.key === "ArrowDown") {
        e.preventDefault();
        current = Math.min(steps.length, current + 1);
        render();
      } else if (ci >= 0) {
        e.preventDefault();
        // Shift with the refusal key sets every field to the refusal; the key alone sets its own.
        set(current, ci, e.shiftKey);
      } else if (key === "q" && data.quote_step) {
        e.preventDefault();
        startQuoting();
      } else if (key === "x" && data.quote_step) {
        e.preventDefault();
        quote = null;
        render();
        save();
      } else if (key === "g") {
        toggle(guideEl);
      } else if (e.key === "?") {
        toggle(keysEl);
      } else if (key && current === steps.length) {
        say(
          labelled ? "labelled: Enter for the next answer; Backspace or ↑ to change a choice" : statusEl.textContent,
          labelled ? "ok" : "bad"
        );
      }
    });

    render();
    if (labelled) say("labelled: Enter for the next answer; Backspace or ↑ to change a choice", "ok");
  }

  function pollDedup(el) {
    if (el.dataset.state !== "running") return;
    const text = document.getElementById("dedup-progress");
    const timer = window.setInterval(function () {
      fetch("/dedup/status", { credentials: "same-origin" })
        .then(function (r) { return r.json(); })
        .then(function (j) {
          if (j.state !== "running") {
            window.clearInterval(timer);
            window.location.reload();
          } else if (text && j.total) {
            text.textContent = "embedding " + j.done + " of " + j.total + " texts";
          }
        })
        .catch(function () { window.clearInterval(timer); });
    }, 1000);
  }
})();
