// agentdoc's page: follow the document live, and send the page's forms without leaving it.
// Plain script, no build step: every form also works without it (a post and a redirect).
"use strict";

function byId(id) { return document.getElementById(id); }

function tell(words) {
  const problem = byId("problem");
  if (problem) problem.textContent = words || "";
}

function showState(message) {
  const state = byId("state");
  if (state) {
    state.textContent = message.words;
    state.className = "state state-" + message.kind;
  }
  const cancel = document.querySelector("form.cancel");
  if (cancel) cancel.hidden = !message.busy;
}

function follow(main) {
  const source = new EventSource(main.dataset.events);
  const tail = byId("tail");
  const asked = byId("asked");
  let askedShown = asked.innerHTML;
  source.onmessage = (event) => {
    const message = JSON.parse(event.data);
    const atEnd = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
    if (message.head !== undefined) byId("head").innerHTML = message.head;
    tail.innerHTML = message.tail;
    if (message.asked !== askedShown) {
      asked.innerHTML = message.asked;
      askedShown = message.asked;
      hook(asked);
    }
    showState(message);
    if (atEnd) window.scrollTo(0, document.body.scrollHeight);
  };
  source.addEventListener("gone", () => { tell("This document is gone."); source.close(); });
}

async function send(form, submitter) {
  const body = new URLSearchParams(new FormData(form));
  if (submitter && submitter.name) body.set(submitter.name, submitter.value);
  const buttons = form.querySelectorAll("button");
  buttons.forEach((b) => { b.disabled = true; });
  try {
    const answer = await fetch(form.action, {
      method: "POST",
      body: body,
      headers: { "Accept": "application/json" },
      credentials: "same-origin",
    });
    const result = await answer.json().catch(() => ({ error: answer.statusText }));
    if (!answer.ok || result.error) {
      tell(result.error || answer.statusText);
      return;
    }
    tell("");
    if (form.classList.contains("new")) {
      window.location.href = result.href;
      return;
    }
    const box = form.querySelector("textarea");
    if (box) box.value = "";
  } catch (error) {
    tell("Not sent: " + error);
  } finally {
    buttons.forEach((b) => { b.disabled = false; });
  }
}

function hook(scope) {
  scope.querySelectorAll("form[method=post]").forEach((form) => {
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      send(form, event.submitter);
    });
  });
}

document.addEventListener("DOMContentLoaded", () => {
  hook(document);
  const main = document.querySelector("main[data-events]");
  if (main) follow(main);
});
