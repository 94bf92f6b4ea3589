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
  // Plotly's text is escaped markup (charts.literal) with <br> between lines: as words.
  // A textarea's content is never parsed into elements, so nothing in it can run.
  var decoder = document.createElement("textarea");
  function words(text) {
    decoder.innerHTML = String(text == null ? "" : text).replace(/<br>/g, " ");
    return decoder.value;
  }
  // An array as Plotly's JSON writes it: a plain list, or a typed one in base64
  var TYPED = {f8: Float64Array, f4: Float32Array, i4: Int32Array, u4: Uint32Array,
               i2: Int16Array, u2: Uint16Array, i1: Int8Array, u1: Uint8Array};
  function values(array) {
    if (!array || Array.isArray(array)) { return array || []; }
    if (array.bdata && TYPED[array.dtype]) {
      var bytes = Uint8Array.from(atob(array.bdata), function (c) { return c.charCodeAt(0); });
      return Array.prototype.slice.call(new TYPED[array.dtype](bytes.buffer));
    }
    return [];
  }
  function number(value, low, high) {
    if (value == null || isNaN(value)) { return "n/a"; }
    var text = (+value).toFixed(2);
    return low == null || high == null ? text
      : text + " [" + (+low).toFixed(2) + ", " + (+high).toFixed(2) + "]";
  }
  // each value's interval from its error bar, where the trace has one
  function bounds(trace, axis, value, i) {
    var bar = trace["error_" + axis];
    if (!bar || bar.visible === false || value == null) { return [null, null]; }
    var up = values(bar.array)[i], down = bar.symmetric === false ? values(bar.arrayminus)[i] : up;
    return up == null || down == null ? [null, null] : [value - down, value + up];
  }
  function axisTitle(axis) {
    var title = axis && axis.title;
    return words(title && (title.text || title)) || "";
  }
  // The chart's numbers as a table, for a reader who cannot see it: a row per category
  // (bars, radar spokes) and a column per trace, or a row per point (a scatter)
  function dataTable(data, caption) {
    var traces = data.data.filter(function (t) { return t.hoverinfo !== "skip"; });
    var head = [], rows = [], order = [], byCategory = {};
    var points = traces.some(function (t) { return t.type === "scatter"; });
    if (points) {
      head = ["", "series", axisTitle(data.layout.xaxis), axisTitle(data.layout.yaxis)];
      traces.forEach(function (t) {
        var xs = values(t.x), ys = values(t.y), texts = t.text || [];
        xs.forEach(function (x, i) {
          var bx = bounds(t, "x", x, i), by = bounds(t, "y", ys[i], i);
          rows.push([words(texts[i] || i + 1), words(t.name), number(x, bx[0], bx[1]),
                     number(ys[i], by[0], by[1])]);
        });
      });
    } else {
      var polar = traces.length && traces[0].type === "scatterpolar";
      var across = traces.length && traces[0].orientation === "h";
      var axis = polar ? null : across ? data.layout.yaxis : data.layout.xaxis;
      head = [axisTitle(axis)];
      traces.forEach(function (t, n) {
        head.push(words(t.name) || "value");
        var keys = values(polar ? t.theta : across ? t.y : t.x);
        var nums = values(polar ? t.r : across ? t.x : t.y);
        keys.forEach(function (key, i) {
          key = words(key);
          if (!(key in byCategory)) { byCategory[key] = []; order.push(key); }
          var b = bounds(t, across ? "x" : "y", nums[i], i);
          byCategory[key][n] = number(nums[i], b[0], b[1]);
        });
      });
      rows = order.map(function (key) {
        return [key].concat(traces.map(function (t, n) { return byCategory[key][n] || "n/a"; }));
      });
    }
    var table = document.createElement("table"), cap = table.createCaption();
    cap.textContent = caption;
    var tr = table.createTHead().insertRow();
    head.forEach(function (h) {
      var th = document.createElement("th");
      th.scope = "col";
      th.textContent = h;
      tr.appendChild(th);
    });
    var body = table.createTBody();
    rows.forEach(function (row) {
      var r = body.insertRow();
      row.forEach(function (cell, i) {
        var c = i ? r.insertCell() : document.createElement("th");
        if (!i) { c.scope = "row"; r.appendChild(c); } else { c.className = "num"; }
        c.textContent = cell;
      });
    });
    return table;
  }
  // A chart is a figure named by its title, described by its numbers: a table the page
  // already shows (aria-describedby in the markup), else one written here, folded away.
  // Its drawing is the image (the figure also holds the mode bar's buttons, which an
  // image may not: they would be hidden from a screen reader yet reached by Tab).
  function chartName(data) {
    var title = data.layout.title;
    return words(title && (title.text || title)) || "Chart";
  }
  function nameDrawing(node, name) {
    node.querySelectorAll("svg.main-svg").forEach(function (svg, n) {
      if (n) { svg.setAttribute("aria-hidden", "true"); return; }
      svg.setAttribute("role", "img");
      svg.setAttribute("aria-label", name);
    });
  }
  function describe(node, data) {
    var name = chartName(data);
    node.setAttribute("role", "figure");
    node.setAttribute("aria-label", name);
    if (node.hasAttribute("aria-describedby")) { return; }
    var id = node.dataset.figure + "-numbers";
    var details = document.getElementById(id + "-details");
    if (!details) {
      details = document.createElement("details");
      details.id = id + "-details";
      details.className = "chart-numbers";
      var summary = document.createElement("summary");
      summary.textContent = "The chart's numbers as a table";
      var wrap = document.createElement("div");
      wrap.className = "table-wrap";
      wrap.setAttribute("role", "region");
      wrap.setAttribute("aria-label", name + ": numbers");
      wrap.tabIndex = 0;
      var table = dataTable(data, name);
      table.id = id;
      wrap.appendChild(table);
      details.appendChild(summary);
      details.appendChild(wrap);
      node.insertAdjacentElement("afterend", details);
    }
    node.setAttribute("aria-describedby", id);
  }
  // a phone's width: no mode bar (it would sit over the chart, and a touch brings up
  // nothing it offers that pinching does not)
  var PHONE = 560;
  function draw(node, data) {
    // the mode bar runs down the right edge, clear of the title and the legend
    data.layout.modebar = {orientation: "v"};
    var phone = node.clientWidth < PHONE;
    if (phone) { narrow(data.layout); }
    describe(node, data);
    Plotly.newPlot(node, data.data, data.layout,
                   {displaylogo: false, responsive: true, displayModeBar: phone ? false : "hover"})
      .then(function () { nameDrawing(node, chartName(data)); });
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
