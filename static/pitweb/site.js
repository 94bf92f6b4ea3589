// Draw every Plotly figure embedded with json_script, and poll a run's status.
(function () {
  // Plotly is loaded only on pages that draw a chart
  if (window.Plotly) {
    document.querySelectorAll("[data-figure]").forEach(function (node) {
      var data = JSON.parse(document.getElementById(node.dataset.figure).textContent);
      // the mode bar runs down the right edge, clear of the title and the legend
      data.layout.modebar = {orientation: "v"};
      Plotly.newPlot(node, data.data, data.layout, {displaylogo: false, responsive: true});
    });
  }
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
