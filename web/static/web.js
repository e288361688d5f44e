/* deep-research web app: keep the event stream's address at the last update seen, so that a
   stream htmx opens again (after the server was away) resumes there; Last-Event-ID does the same
   for the browser's own reconnects. */
document.addEventListener("htmx:sseMessage", function (event) {
  var id = event.detail && event.detail.lastEventId;
  var live = document.getElementById("live");
  if (!id || !live || !live.getAttribute("sse-connect")) { return; }
  live.setAttribute("sse-connect", live.getAttribute("sse-connect").replace(/after=\d+/, "after=" + id));
  live.setAttribute("data-last-event", id);
});
document.addEventListener("htmx:sseClose", function () {
  var live = document.getElementById("live");
  if (live) { live.setAttribute("data-stream", "closed"); }
});
document.addEventListener("htmx:sseError", function () {
  var live = document.getElementById("live");
  if (live) { live.setAttribute("data-stream", "lost"); }  /* shows .lost-note until it opens */
});
document.addEventListener("htmx:sseOpen", function () {
  var live = document.getElementById("live");
  if (live) { live.setAttribute("data-stream", "open"); }
});
/* A form that can't be undone (Delete) asks first; without script it posts as it is. */
document.addEventListener("submit", function (event) {
  var question = event.target.getAttribute && event.target.getAttribute("data-confirm");
  if (question && !window.confirm(question)) { event.preventDefault(); }
});
