// Draw every Plotly figure embedded with json_script, and poll a run's status.
(function () {
  document.querySelectorAll("[data-figure]").forEach(function (node) {
    var data = JSON.parse(document.getElementById(node.dataset.figure).textContent);
    Plotly.newPlot(node, data.data, data.layout, {displaylogo: false, responsive: true});
  });
  var badge = document.querySelector("[data-status-url]");
  if (badge && ["received", "verifying"].indexOf(badge.dataset.state) >= 0) {
    var timer = setInterval(function () {
      fetch(badge.dataset.statusUrl, {credentials: "same-origin"})
        .then(function (r) { return r.json(); })
        .then(function (s) {
          badge.textContent = s.status;
          if (["received", "verifying"].indexOf(s.status) < 0) { clearInterval(timer); location.reload(); }
        });
    }, 2000);
  }
})();
