/* perfclones: draws PerfTestMulti result files into the charts of a page,
   with the page interface of PerfTest's html/perf.js: render_graphs(results
   [, parent]) draws every div.chart and div.small-chart and fills every
   div.summary, configured by their data-* attributes. Written for
   perfclones. */
function render_graphs(results, parent) {
  var root = parent ? $(parent) : $(document);
  root.find('.chart, .small-chart').each(function () { perf_chart($(this), results); });
  root.find('.summary').each(function () { perf_summary($(this), results); });
}

function perf_attr(div, key, def) {
  var v = div.attr('data-' + key);
  return v === undefined || v === null || v === '' ? def : v;
}

function perf_summary(div, results) {
  var r = results[perf_attr(div, 'scenario', '')];
  if (!r) return;
  var mode = perf_attr(div, 'mode', ''), rate;
  if (mode === 'send') rate = r['send-msg-rate'];
  else if (mode === 'recv') rate = r['recv-msg-rate'];
  else rate = (r['send-msg-rate'] + r['recv-msg-rate']) / 2;
  div.append('<strong>' + Math.round(rate) + '</strong>msg/s');
}

function perf_chart(div, results) {
  var file = perf_attr(div, 'file', null);
  if (file) {
    $.ajax({ url: file, success: function (data) { perf_draw(div, JSON.parse(data)); } });
  } else {
    perf_draw(div, results);
  }
}

function perf_draw(div, results) {
  var data = results[perf_attr(div, 'scenario', '')];
  if (!data) return;
  var type = perf_attr(div, 'type', 'time'), series;
  if (type === 'time') series = perf_time(div, data);
  else if (type === 'series') series = perf_series(div, data);
  else if (type === 'x-y') series = perf_x_y(div, data);
  else if (type === 'r-l') series = perf_r_l(data);
  else return;
  perf_wrap(div);
  var log2 = type === 'r-l' || (type === 'time' && perf_attr(div, 'latency', '') === 'true');
  $.plot(div, series, {
    xaxis: { log: perf_attr(div, 'x-axis-log', '') === 'true' },
    yaxes: [{ min: 0 }, { position: 'right', log: log2, min: log2 ? 100 : 0 }],
    legend: { position: perf_attr(div, 'legend', 'se') }
  });
}

// perf_wrap puts the chart in a table with its axis labels.
function perf_wrap(div) {
  var el = div[0];
  if (el.parentNode && el.parentNode.className === 'perf-chart-cell') return;
  var table = document.createElement('table');
  table.className = 'perf-chart';
  var row = table.insertRow(), y = row.insertCell(), cell = row.insertCell(), y2 = row.insertCell();
  y.className = 'yaxis'; y.textContent = perf_attr(div, 'y-axis', '');
  cell.className = 'perf-chart-cell';
  y2.className = 'yaxis'; y2.textContent = perf_attr(div, 'y-axis2', '');
  var xrow = table.insertRow(); xrow.insertCell();
  var x = xrow.insertCell(); x.className = 'xaxis'; x.textContent = perf_attr(div, 'x-axis', '');
  el.parentNode.insertBefore(table, el);
  cell.appendChild(el);
}

function perf_keys(div, def) {
  var keys = perf_attr(div, 'plot-keys', null);
  return keys ? keys.split(' ') : [perf_attr(div, 'plot-key', def)];
}

function perf_time(div, data) {
  var keys = ['send-msg-rate', 'recv-msg-rate'], out = [];
  if (perf_attr(div, 'latency', '') === 'true') keys.push('avg-latency');
  $.each(keys, function (i, key) {
    var points = [];
    $.each(data.samples || [], function (j, s) { if (s[key] !== undefined) points.push([s.elapsed / 1000, s[key]]); });
    out.push({ label: key, data: points, yaxis: key === 'avg-latency' ? 2 : 1 });
  });
  return out;
}

function perf_series(div, data) {
  var xkey = perf_attr(div, 'x-key', data.dimensions[0]);
  var skey = perf_attr(div, 'series-key', data.dimensions[1]);
  var pkey = perf_attr(div, 'plot-key', 'send-msg-rate');
  var first = data.dimensions[0] === skey, out = [];
  $.each(data['dimension-values'][skey] || [], function (i, s) {
    var points = [];
    $.each(data['dimension-values'][xkey] || [], function (j, x) {
      var node = first ? (data.data[s] || {})[x] : (data.data[x] || {})[s];
      if (node && node[pkey] !== undefined) points.push([parseFloat(x), node[pkey]]);
    });
    out.push({ label: skey + ' = ' + s, data: points });
  });
  return out;
}

function perf_x_y(div, data) {
  var xkey = perf_attr(div, 'x-key', data.dimensions[0]), out = [];
  $.each(perf_keys(div, 'send-msg-rate'), function (i, key) {
    var points = [];
    $.each(data['dimension-values'][xkey] || [], function (j, x) {
      var node = data.data[x];
      if (node && node[key] !== undefined) points.push([parseFloat(x), node[key]]);
    });
    out.push({ label: key, data: points, yaxis: key.indexOf('bytes') >= 0 ? 2 : 1 });
  });
  return out;
}

function perf_r_l(data) {
  var rate = [], lat = [];
  $.each(data['dimension-values'].producerRateLimit || [], function (i, x) {
    var node = data.data[x];
    if (!node) return;
    rate.push([parseFloat(x), node['send-msg-rate']]);
    if (node['avg-latency'] !== undefined) lat.push([parseFloat(x), node['avg-latency']]);
  });
  return [{ label: 'rate achieved', data: rate }, { label: 'latency (us)', data: lat, yaxis: 2 }];
}
