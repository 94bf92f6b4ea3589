// Draw every Plotly figure (embedded with json_script, or fetched), and poll a run's status and a
// points job's progress.
(function () {
  // On a phone a chart's title would run off its edge and the legend over the title:
  // the title wraps onto lines that fit, and the legend goes below the plot.
  function narrow(layout) {
    var title = layout.title && (layout.title.text || layout.title);
    if (typeof title === "string") {
      var lines = [], line = "";
      title.split(" ").forEach(function (word) {
        if (line && (line + " " + word).length > 34) { lines.push(line); line = word; }
        else { line = line ? line + " " + word : word; }
      });
      if (line) { lines.push(line); }
      layout.title = {text: lines.join("<br>"), font: {size: 14}, x: 0.02, xanchor: "left"};
      layout.margin = Object.assign({}, layout.margin, {t: 30 + 18 * lines.length});
    }
    layout.legend = {orientation: "h", x: 0, xanchor: "left", y: -0.22, yanchor: "top"};
    layout.margin = Object.assign({}, layout.margin, {b: 90});
    layout.height = (layout.height || 320) + 60;
  }
  // A figure is embedded with json_script, or (the board's) fetched from its
  // data-figure-src: the table comes first, its chart with Plotly once the page has loaded
  function figureOf(node) {
    if (!node.pitwebFigure) {
      node.pitwebFigure = node.dataset.figureSrc
        ? fetch(node.dataset.figureSrc, {credentials: "same-origin"})
            .then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); })
            .then(function (answer) { return answer.figure; })
        : Promise.resolve(JSON.parse(document.getElementById(node.dataset.figure).textContent));
    }
    return node.pitwebFigure;
  }
  function draw(node, data) {
    // the mode bar runs down the right edge, clear of the title and the legend
    data.layout.modebar = {orientation: "v"};
    if (node.clientWidth < 560) { narrow(data.layout); }
    Plotly.newPlot(node, data.data, data.layout, {displaylogo: false, responsive: true});
    // a point that carries a page of this site (the board's runs) opens it when clicked
    node.on("plotly_click", function (event) {
      var url = event.points.length ? event.points[0].customdata : null;
      if (typeof url === "string" && /^\/runs\/[0-9a-f]{64}\/\?submission=[0-9]+$/.test(url)) {
        window.location.href = url;
      }
    });
  }
  function drawAll() {
    document.querySelectorAll("[data-figure]").forEach(function (node) {
      figureOf(node).then(
        function (data) { if (data) { draw(node, data); } },
        function () { node.textContent = "The chart could not be loaded: every number it draws is in the table."; }
      );
    });
  }
  // Plotly is loaded only on pages that draw a chart; the board and a family's page
  // fetch it once the page has loaded (a table first, its chart a moment later)
  var later = document.getElementById("plotly-later");
  if (window.Plotly) {
    drawAll();
  } else if (later) {
    var fetchPlotly = function () {
      document.querySelectorAll("[data-figure-src]").forEach(figureOf);  // meanwhile
      var script = document.createElement("script");
      script.src = later.dataset.src;
      script.onload = drawAll;
      document.head.appendChild(script);
    };
    if (document.readyState === "complete") { fetchPlotly(); }
    else { window.addEventListener("load", fetchPlotly); }
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
  // a points job that is queued or running: its progress, until it ends
  document.querySelectorAll("tr[data-job]").forEach(function (row) {
    var state = row.querySelector(".job-state"), done = row.querySelector(".job-progress");
    if (["queued", "running"].indexOf(state.textContent.trim()) < 0) { return; }
    var timer = setInterval(function () {
      fetch(row.dataset.job, {credentials: "same-origin"})
        .then(function (r) { return r.json(); })
        .then(function (j) {
          state.textContent = j.state;
          done.textContent = j.done_calls + " of about " + j.total_calls;
          if (["queued", "running"].indexOf(j.state) < 0) { clearInterval(timer); location.reload(); }
        });
    }, 2000);
  });
  // the menu: open on a wide screen (its summary hidden), folded behind "Menu" on a phone
  var menu = document.getElementById("site-menu");
  if (menu && window.matchMedia) {
    var phone = window.matchMedia("(max-width: 760px)");
    var fold = function () { menu.open = !phone.matches; };
    fold();
    if (phone.addEventListener) { phone.addEventListener("change", fold); }
  }
  // a table wider than its frame: the frame says so above it, and takes the keyboard's
  // focus so that arrow keys scroll it
  function markOverflow() {
    document.querySelectorAll(".table-wrap, .scroll").forEach(function (frame) {
      if (frame.scrollWidth > frame.clientWidth + 1) {
        frame.setAttribute("data-overflowing", "");
        if (!frame.hasAttribute("tabindex")) { frame.setAttribute("tabindex", "0"); }
      } else {
        frame.removeAttribute("data-overflowing");
      }
    });
  }
  markOverflow();
  window.addEventListener("resize", markOverflow);
  // sortable tables: click a header to sort its rows (numbers by value, words A-Z)
  document.querySelectorAll("table.sortable th[data-sort]").forEach(function (th) {
    th.addEventListener("click", function () {
      var table = th.closest("table"), body = table.tBodies[0];
      var index = Array.prototype.indexOf.call(th.parentNode.children, th);
      var numeric = th.dataset.sort === "num";
      var descending = th.getAttribute("aria-sort") !== "descending";
      table.querySelectorAll("th[aria-sort]").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", descending ? "descending" : "ascending");
      var rows = Array.prototype.filter.call(body.rows, function (r) { return r.cells.length > index; });
      rows.sort(function (a, b) {
        var x = a.cells[index].dataset.value || "", y = b.cells[index].dataset.value || "";
        var order = numeric ? (parseFloat(x) || -Infinity) - (parseFloat(y) || -Infinity) : x.localeCompare(y);
        return descending ? -order : order;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
})();
