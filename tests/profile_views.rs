//! The views' model (overview, operators, kernels, memory, modules): every figure is the view
//! result's own number, every `data-metric` name is documented, and no figure repeats in a context.

use crate::common;

use std::collections::HashSet;

use profile_model::analysis::views::step_time::StepCategory;
use profile_model::analysis::views::RankViews;
use profile_model::page::profile_views::{step_bars, view, ViewId, ViewPart};
use profile_model::table::load_path;

fn views(file: &str) -> RankViews {
    RankViews::of(0, &load_path(&common::traces_dir().join(file)).unwrap())
}

fn context<'a>(f: &'a profile_model::page::analyses_view::Figure, key: &str) -> Option<&'a str> {
    f.context.iter().find(|c| c.0 == key).map(|c| c.1.as_str())
}

#[test]
fn every_figure_is_the_results_number_and_documented_once() {
    let doc = include_str!("../src/page/profile_views.rs");
    for file in [
        "hta__df_index_resolver.json.gz",
        "hta__critical_path_alexnet.json.gz",
    ] {
        let v = views(file);
        for id in ViewId::ALL {
            for by_shape in [false, true] {
                let model = view(id, &v, by_shape);
                let mut seen = HashSet::new();
                for f in model.figures() {
                    assert!(
                        doc.contains(&format!("`{}`", f.metric)),
                        "{} is not documented",
                        f.metric
                    );
                    assert!(
                        seen.insert((f.metric, f.context.clone())),
                        "{file} {id}: {} twice in {:?}",
                        f.metric,
                        f.context
                    );
                    let name = context(f, "name");
                    let want = match f.metric {
                        "op-device-total-us" => {
                            let rows = if by_shape {
                                &v.operators_by_shape.rows
                            } else {
                                &v.operators.rows
                            };
                            let shapes = context(f, "shapes");
                            rows.iter()
                                .find(|r| {
                                    Some(r.name.as_str()) == name
                                        && r.input_shapes.as_deref() == shapes
                                })
                                .map(|r| r.device_total_us)
                        }
                        "kernel-total-us" => v
                            .kernels
                            .rows
                            .iter()
                            .find(|r| Some(r.name.as_str()) == name)
                            .map(|r| r.total_us),
                        "memory-peak-bytes" => v
                            .memory
                            .devices
                            .iter()
                            .find(|d| Some(d.device.as_str()) == context(f, "device"))
                            .map(|d| d.peak_allocated_bytes as f64),
                        "step-total-us" => match context(f, "step") {
                            Some("average") => v.step_time.average.as_ref().map(|a| a.total_us),
                            Some("all") => v
                                .step_time
                                .steps
                                .iter()
                                .find(|s| s.step.is_none())
                                .map(|s| s.total_us),
                            Some(n) => v
                                .step_time
                                .steps
                                .iter()
                                .find(|s| s.step.map(|x| x.to_string()).as_deref() == Some(n))
                                .map(|s| s.total_us),
                            None => None,
                        },
                        _ => Some(f.value),
                    };
                    assert_eq!(
                        want,
                        Some(f.value),
                        "{file} {id} {} {:?}",
                        f.metric,
                        f.context
                    );
                }
            }
        }
    }
}

/// The segments of a bar sit end to end and the longest bar fills the scale.
#[test]
fn step_bars_share_one_scale() {
    let v = views("hta__df_index_resolver.json.gz");
    let bars = step_bars(&v.step_time);
    assert_eq!(
        bars.bars.len(),
        v.step_time.steps.len() + 1,
        "the steps and the average"
    );
    let mut widest: f64 = 0.0;
    for b in &bars.bars {
        let mut at = 0.0;
        for s in &b.segments {
            assert!((s.start_pct - at).abs() < 1e-9);
            at += s.width_pct;
        }
        widest = widest.max(at);
        let sum: f64 = b.segments.iter().map(|s| s.figure.value).sum();
        assert!((sum - b.total.value).abs() < 1e-6 * b.total.value.max(1.0));
    }
    // One scale: the axis's round top (at or past the longest bar) is 100 %.
    let longest = bars.bars.iter().map(|b| b.total.value).fold(0.0, f64::max);
    assert!(
        bars.axis.top >= longest && widest <= 100.0 + 1e-9,
        "{widest}"
    );
    assert!((widest / 100.0 * bars.axis.top - longest).abs() < 1e-6 * longest.max(1.0));
    assert!(bars.bars[0]
        .segments
        .iter()
        .any(|s| s.category == StepCategory::Kernel));
}

#[test]
fn views_without_their_data_say_how_to_record_it() {
    let v = views("hta__critical_path_alexnet.json.gz");
    for (id, words) in [
        (ViewId::Memory, "profile_memory=True"),
        (ViewId::Modules, "with_stack=True"),
    ] {
        let model = view(id, &v, false);
        let said = model.parts.iter().any(|p| matches!(p, ViewPart::Part(profile_model::page::analyses_view::Part::Muted(t)) if t.contains(words)));
        assert!(said, "{id}");
    }
}

/// The views cross from the worker to the page as the typed message, and come back equal.
#[test]
fn the_views_cross_the_worker_boundary_unchanged() {
    use profile_model::protocol::codec::{decode, encode};
    use profile_model::protocol::shard::{views_bytes, FromShard};
    use profile_model::protocol::FromWorker;
    for file in ["hta__df_index_resolver.json.gz", "hta__nccl_data.json.gz"] {
        let set = profile_model::table::TraceSet::single(
            load_path(&common::traces_dir().join(file)).unwrap(),
        );
        let views = profile_model::analysis::views::all_views(&set);
        let bytes = encode(&FromWorker::Views {
            views: views.clone(),
            steps: Some((1, 2)),
        })
        .unwrap();
        // Through a shard's coordinator, which reads each rank's views and passes them on.
        let FromShard::Views(each, steps) = FromShard::read(&bytes).unwrap() else {
            panic!("a shard's Views message is read as one");
        };
        assert_eq!(steps, Some((1, 2)));
        assert_eq!(
            views_bytes(each, steps).unwrap(),
            bytes,
            "{file}: passed on unchanged"
        );
        let FromWorker::Views { views: back, .. } = decode(&bytes).unwrap() else {
            panic!("a Views message comes back as one");
        };
        for (b, v) in back.iter().zip(&views) {
            assert_eq!(b.operators, v.operators, "{file} operators");
            assert_eq!(
                b.operators_by_shape, v.operators_by_shape,
                "{file} by shape"
            );
            assert_eq!(b.kernels, v.kernels, "{file} kernels");
            assert_eq!(b.step_time, v.step_time, "{file} steps");
            assert_eq!(b.modules, v.modules, "{file} modules");
            for (x, y) in b.memory.devices.iter().zip(&v.memory.devices) {
                for (p, q) in x.curve.iter().zip(&y.curve) {
                    assert_eq!(p, q, "{file} curve");
                }
                assert_eq!(x, y, "{file} memory");
            }
        }
        assert_eq!(back, views, "{file}");
    }
}

#[test]
fn the_memory_charts_hover_reads_the_curve_as_the_last_event_left_it() {
    let v = views("hta__df_index_resolver.json.gz");
    let model = view(ViewId::Memory, &v, false);
    let charts: Vec<_> = model
        .parts
        .iter()
        .filter_map(|p| match p {
            ViewPart::Line(c) => Some(c),
            _ => None,
        })
        .collect();
    assert!(!charts.is_empty(), "the trace records memory");
    // The device's memory first: each chart is found by its device's name.
    assert_eq!(charts.len(), v.memory.devices.len());
    for chart in &charts {
        let device = v
            .memory
            .devices
            .iter()
            .find(|d| d.device == chart.title)
            .unwrap();
        let curve = &device.curve;
        // The peak's time reads the peak; the right edge reads the last point; every point's own
        // time reads that point's value (the last one when several share a time).
        let read = |r: (f64, Vec<(&str, f64)>)| r.1.iter().find(|s| s.0 == "Allocated").unwrap().1;
        let allocated = |ts: f64| read(chart.readout_at_us(ts).unwrap());
        assert_eq!(
            allocated(device.peak_ts_us),
            device.peak_allocated_bytes as f64
        );
        assert_eq!(
            read(chart.readout_at(1.0).unwrap()),
            curve.last().unwrap().allocated_bytes as f64
        );
        assert!(
            chart.readout_at(0.0).is_some(),
            "the left edge is the first point"
        );
        for (i, p) in curve.iter().enumerate() {
            let last_at_ts = curve[i..]
                .iter()
                .take_while(|q| q.ts_us == p.ts_us)
                .last()
                .unwrap();
            assert_eq!(allocated(p.ts_us), last_at_ts.allocated_bytes as f64);
        }
    }
}

#[test]
fn a_views_rows_show_their_events_on_the_views_rank() {
    use profile_model::page::analyses_view::Part;
    use profile_model::table::EventKind;
    let table = load_path(&common::traces_dir().join("hta__df_index_resolver.json.gz")).unwrap();
    // The rank number a view is of (here 7, as a rank of a set would be).
    let v = RankViews::of(7, &table);
    for (id, kind) in [
        (ViewId::Kernels, EventKind::Kernel),
        (ViewId::Operators, EventKind::CpuOp),
        (ViewId::Overview, EventKind::Kernel),
    ] {
        let model = view(id, &v, false);
        let tables: Vec<_> = model
            .parts
            .iter()
            .filter_map(|p| match p {
                ViewPart::Part(Part::Table(t)) if t.locate.is_some() => Some(t),
                _ => None,
            })
            .collect();
        assert!(
            !tables.is_empty(),
            "{id:?}: a table whose rows show their events"
        );
        for t in tables {
            let by = t.locate.unwrap();
            let query = by.query("some name");
            assert_eq!(query.ranks, vec![7], "{id:?}: on the view's rank");
            assert_eq!(query.names, vec!["some name".to_string()]);
            assert!(query.kinds.contains(&kind), "{id:?}: {:?}", query.kinds);
        }
    }
}

#[test]
fn an_occupancy_of_zero_is_unknown_not_a_figure() {
    // Kineto writes 0 when it could not estimate a kernel's occupancy: a kernel that ran had some.
    let v = views("hta__nccl_data.json.gz");
    let zero: Vec<&str> = v
        .kernels
        .rows
        .iter()
        .filter(|r| r.est_achieved_occupancy_pct == Some(0.0))
        .map(|r| r.name.as_str())
        .collect();
    assert!(!zero.is_empty(), "the trace has kernels Kineto gave 0 %");
    let model = view(ViewId::Kernels, &v, false);
    for f in model.figures() {
        if f.metric == "kernel-occupancy-pct" {
            assert!(f.value > 0.0, "{:?}: {}", f.context, f.value);
            let name = context(f, "name").unwrap();
            assert!(!zero.contains(&name), "{name}");
        }
    }
    assert!(
        model
            .figures()
            .iter()
            .any(|f| f.metric == "kernel-occupancy-pct"),
        "the known occupancies are shown"
    );
}
