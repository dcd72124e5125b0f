use profile_model::analysis::all::AnalysisOptions;
use profile_model::analysis::gpu::RankPrep;
fn main() {
    let p = std::env::args().nth(1).unwrap();
    let t = profile_model::table::load_path(std::path::Path::new(&p)).unwrap();
    let opts = AnalysisOptions::hta_compat();
    let prep = RankPrep::new(&t, &opts);
    println!("dev {} cpu_by_corr {} steps {:?} window {:?}", prep.dev.len(), prep.cpu_by_corr.len(), prep.kept_steps, prep.window);
    for d in prep.dev.iter().take(5) {
        println!("{:?} {} launch {:?}", d, t.name_of_id(d.name), d.launch.map(|l| t.name_at(l as usize)));
    }
    for r in 0..t.len() { if t.correlation_at(r)==Some(20200002) { println!("row {r} kind {:?} stream {:?} dur {:?} cat {:?}", t.kind_at(r), t.stream_at(r), t.dur_at(r), t.category_at(r)); } }
}
