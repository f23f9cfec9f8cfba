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
    let current = nextUnset(steps.length - 1);
    if (current === steps.length) current = 0; // labelled before: keys change it from the first choice

    const statusEl = document.getElementById("status");
    const progressEl = document.getElementById("progress");
    const progressBar = document.getElementById("progress-bar");
    const answerEl = document.getElementById("answer");
    const quoteEl = document.getElementById("quote");
    const clearQuote = document.getElementById("clear-quote");
    const stepsEl = document.getElementById("steps");

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
          btn.classList.toggle("on", step.name in values && same(values[step.name], choice.value));
        });
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

    function save() {
      const body = JSON.stringify({ values: values, quote: level() > 0 ? quote : null });
      say("saving…", "");
      chain = chain.then(function () {
        return fetch(data.save, {
          method: "POST",
          headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
          body: body,
          credentials: "same-origin",
        })
          .then(function (r) {
            return r.json();
          })
          .then(function (j) {
            if (j.error) {
              labelled = false;
              say("not saved: " + j.error, "bad");
              return;
            }
            labelled = j.labelled;
            if (j.labelled) say("labelled", "ok");
            else if (j.errors && j.errors.length) say(j.errors[0], j.complete || j.needs_quote ? "bad" : "");
            else say("saved; not labelled yet (set every choice)", "");
            progressEl.textContent = j.progress[0] + " of " + j.progress[1] + " labelled";
            if (progressBar) progressBar.value = j.progress[0];
          })
          .catch(function (e) {
            labelled = false;
            say("not saved (" + e + "); is propeval review still running?", "bad");
          });
      });
      return chain;
    }

    function set(si, ci) {
      const step = steps[si];
      const value = step.choices[ci].value;
      values[step.name] = value;
      if (step.sets_all !== null && step.sets_all !== undefined && same(value, step.sets_all)) {
        steps.forEach(function (other) {
          if (other.choices.some(function (c) { return same(c.value, value); })) values[other.name] = value;
        });
      }
      if (step.name === data.quote_step && !(value > 0)) quote = null;
      current = nextUnset(si);
      render();
      return save();
    }

    function go(url) {
      chain.then(function () {
        if (url) window.location.assign(url);
      });
    }

    function moveOn() {
      chain.then(function () {
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
      set(Number(btn.dataset.step), Number(btn.dataset.choice));
      btn.blur();
    });

    if (clearQuote) {
      clearQuote.addEventListener("click", function () {
        quote = null;
        render();
        save();
      });
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
        const text = answerEl.textContent;
        let start = before.toString().length;
        let end = start + range.toString().length;
        while (start < end && /\s/.test(text[start])) start++;
        while (end > start && /\s/.test(text[end - 1])) end--;
        if (end <= start) return;
        quote = text.slice(start, end);
        if (!(level() > 0)) say("quote kept; it counts once propaganda is above 0", "");
        render();
        save();
      });
    }

    document.addEventListener("keydown", function (e) {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      const tag = e.target && e.target.tagName;
      if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
      if (e.key === "Enter") {
        e.preventDefault();
        moveOn();
      } else if (e.key === "ArrowRight") {
        e.preventDefault();
        go(data.next);
      } else if (e.key === "ArrowLeft") {
        e.preventDefault();
        go(data.prev);
      } else if (e.key === "Backspace") {
        e.preventDefault();
        current = Math.max(0, current - 1);
        render();
      } else if (e.key.length === 1 && current < steps.length) {
        const key = e.key.toLowerCase();
        const ci = steps[current].choices.findIndex(function (c) { return c.key === key; });
        if (ci >= 0) {
          e.preventDefault();
          set(current, ci);
        }
      } else if (e.key.length === 1 && current === steps.length) {
        say(labelled ? "every choice is set: Enter for the next answer, Backspace to change one" : statusEl.textContent, labelled ? "ok" : "bad");
      }
    });

    render();
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
