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
/* The stream's state on #live: "open", "closed" (the run ended), or "lost" (the server is away;
   web.css then shows .lost-note until the stream opens again). */
function streamIs(state) {
  return function () {
    var live = document.getElementById("live");
    if (live) { live.setAttribute("data-stream", state); }
  };
}
document.addEventListener("htmx:sseOpen", streamIs("open"));
document.addEventListener("htmx:sseClose", streamIs("closed"));
document.addEventListener("htmx:sseError", streamIs("lost"));
/* A form that can't be undone (Delete) asks first; without script it posts as it is. */
document.addEventListener("submit", function (event) {
  var question = event.target.getAttribute && event.target.getAttribute("data-confirm");
  if (question && !window.confirm(question)) { event.preventDefault(); }
});
