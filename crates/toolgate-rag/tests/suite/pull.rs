//! `toolgate_rag::hub::pull` against a fake hub on loopback serving the packaged
//! all-MiniLM-L6-v2 in the Hugging Face layout: pins verified, a corrupt file refused and
//! removed, a broken download resumed with `Range` (and restarted when the server ignores
//! it or the resumed file does not verify), the egress guard applied, trust on first use for
//! other repositories, and the pulled directory giving the golden vector.

use std::path::Path;

use toolgate_net::EgressPolicy;
use toolgate_rag::LocalEmbedder;
use toolgate_rag::hub::{
    DEFAULT_PINS, DEFAULT_REPO, DEFAULT_REVISION, Expected, FileStatus, MODEL_FILES, Manifest,
    ModelCache, ModelRef, PullError, PullEvent, PullReport, PullRequest, Trust, pull, sha256_file,
};
use toolgate_testkit::FakeHub;
use url::Url;

use super::model::assert_golden;
use super::{allowing, model_dir};

/// A hub serving the packaged model at the pinned revision.
fn hub() -> FakeHub {
    let hub = FakeHub::start();
    hub.put_dir(DEFAULT_REPO, DEFAULT_REVISION, &model_dir(), &MODEL_FILES);
    hub
}

fn request(hub: &FakeHub, cache: &Path, model: ModelRef, egress: EgressPolicy) -> PullRequest {
    PullRequest {
        model,
        endpoint: Url::parse(&hub.url()).unwrap(),
        cache: ModelCache::at(cache),
        egress,
    }
}

async fn pull_default(
    hub: &FakeHub,
    cache: &Path,
) -> (Result<PullReport, PullError>, Vec<PullEvent>) {
    let req = request(hub, cache, ModelRef::default_model(), allowing(&hub.url()));
    let mut events = Vec::new();
    let result = pull(&req, &mut |e| events.push(e)).await;
    (result, events)
}

fn statuses(report: &PullReport) -> Vec<(String, FileStatus)> {
    report
        .files
        .iter()
        .map(|f| (f.file.clone(), f.status))
        .collect()
}

fn all(status: FileStatus) -> Vec<(String, FileStatus)> {
    MODEL_FILES
        .iter()
        .map(|f| ((*f).to_owned(), status))
        .collect()
}

/// No `*.part` is left in `dir`.
fn no_parts(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .unwrap()
        .all(|e| !e.unwrap().file_name().to_string_lossy().ends_with(".part"))
}

#[tokio::test]
async fn a_pull_verifies_the_pins_and_the_pulled_model_gives_the_golden_vector() {
    let hub = hub();
    let cache = tempfile::tempdir().unwrap();
    let (report, events) = pull_default(&hub, cache.path()).await;
    let report = report.unwrap();
    let dir = cache
        .path()
        .join("sentence-transformers/all-MiniLM-L6-v2")
        .join(DEFAULT_REVISION);
    assert_eq!(report.dir, dir);
    assert_eq!(report.trust, Trust::Pinned);
    assert_eq!(statuses(&report), all(FileStatus::Downloaded));
    for (f, pin) in report.files.iter().zip(DEFAULT_PINS) {
        assert_eq!(
            (f.size, f.sha256.as_str()),
            (pin.size, pin.sha256),
            "{}",
            f.file
        );
        assert_eq!(sha256_file(&dir.join(&f.file)).await.unwrap().1, pin.sha256);
    }
    assert!(no_parts(&dir));
    let manifest = Manifest::read(&dir).unwrap().unwrap();
    assert!(manifest.pinned);
    assert_eq!(
        manifest.files["model.safetensors"].sha256,
        DEFAULT_PINS[2].sha256
    );
    assert_eq!(
        ModelCache::at(cache.path()).complete(&ModelRef::default_model()),
        Some(dir.clone())
    );
    let started: Vec<&PullEvent> = events
        .iter()
        .filter(|e| matches!(e, PullEvent::Started { .. }))
        .collect();
    assert_eq!(started.len(), 3, "{events:?}");
    assert!(events.iter().any(|e| matches!(e,
        PullEvent::Progress { file, received, total: Some(t) } if file == "model.safetensors" && received == t)));
    // The hub layout, one fresh GET per file.
    let seen = hub.requests();
    let want: Vec<String> = MODEL_FILES
        .iter()
        .map(|f| format!("/{DEFAULT_REPO}/resolve/{DEFAULT_REVISION}/{f}"))
        .collect();
    assert_eq!(
        seen.iter().map(|r| r.path.clone()).collect::<Vec<_>>(),
        want
    );
    assert!(seen.iter().all(|r| r.range.is_none()));

    assert_golden(&LocalEmbedder::load(&dir).unwrap());

    // Pulling again verifies what is there and fetches nothing.
    let (again, _) = pull_default(&hub, cache.path()).await;
    assert_eq!(statuses(&again.unwrap()), all(FileStatus::Present));
    assert_eq!(hub.requests().len(), 3);
}

#[tokio::test]
async fn a_corrupted_file_is_refused_named_and_not_left_in_place() {
    let hub = hub();
    hub.corrupt("model.safetensors");
    let cache = tempfile::tempdir().unwrap();
    let (result, _) = pull_default(&hub, cache.path()).await;
    let err = result.unwrap_err();
    let PullError::Mismatch {
        file,
        expected,
        actual,
        origin,
    } = &err
    else {
        panic!("not a mismatch: {err}");
    };
    assert_eq!(
        (file.as_str(), expected.as_str()),
        ("model.safetensors", DEFAULT_PINS[2].sha256)
    );
    assert_eq!(origin, &Expected::Pinned);
    let mut served = std::fs::read(model_dir().join("model.safetensors")).unwrap();
    let mid = served.len() / 2;
    served[mid] ^= 1;
    let dir = ModelCache::at(cache.path()).model_dir(&ModelRef::default_model());
    std::fs::write(cache.path().join("corrupt"), &served).unwrap();
    assert_eq!(
        actual,
        &sha256_file(&cache.path().join("corrupt")).await.unwrap().1
    );
    let text = err.to_string();
    for part in [
        "model.safetensors",
        DEFAULT_PINS[2].sha256,
        actual.as_str(),
        "deleted",
    ] {
        assert!(text.contains(part), "{text}");
    }
    // The verified small files stay; the bad one is gone, part and all.
    assert!(dir.join("config.json").is_file() && dir.join("tokenizer.json").is_file());
    assert!(!dir.join("model.safetensors").exists());
    assert!(no_parts(&dir));
    assert_eq!(
        ModelCache::at(cache.path()).complete(&ModelRef::default_model()),
        None
    );

    // A tampered file already in the cache is replaced on the next pull.
    let hub = self::hub();
    std::fs::write(dir.join("config.json"), b"{\"hidden_size\": 1}").unwrap();
    let (report, events) = pull_default(&hub, cache.path()).await;
    let report = report.unwrap();
    assert_eq!(report.files[0].status, FileStatus::Downloaded);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, PullEvent::Restarted { file, .. } if file == "config.json"))
    );
}

#[tokio::test]
async fn an_interrupted_download_is_resumed_with_range_and_ends_verified() {
    let hub = hub();
    let cut = 10_000_000;
    hub.cut_next("model.safetensors", cut);
    let cache = tempfile::tempdir().unwrap();
    let (result, _) = pull_default(&hub, cache.path()).await;
    let err = result.unwrap_err();
    assert!(matches!(err, PullError::Request { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("run the same command again to resume"),
        "{err}"
    );
    let dir = ModelCache::at(cache.path()).model_dir(&ModelRef::default_model());
    let part = dir.join("model.safetensors.part");
    let kept = std::fs::metadata(&part).unwrap().len();
    assert!(kept > 0 && kept <= cut as u64, "{kept}");
    assert!(!dir.join("model.safetensors").exists());

    let (report, events) = pull_default(&hub, cache.path()).await;
    let report = report.unwrap();
    assert_eq!(
        statuses(&report),
        vec![
            ("config.json".to_owned(), FileStatus::Present),
            ("tokenizer.json".to_owned(), FileStatus::Present),
            (
                "model.safetensors".to_owned(),
                FileStatus::Resumed { from: kept }
            ),
        ]
    );
    let last = hub.requests().pop().unwrap();
    assert_eq!(last.range, Some(format!("bytes={kept}-")));
    assert!(
        events
            .iter()
            .any(|e| matches!(e, PullEvent::Started { from, .. } if *from == kept))
    );
    assert_eq!(report.files[2].sha256, DEFAULT_PINS[2].sha256);
    assert!(no_parts(&dir));
    assert_golden(&LocalEmbedder::load(&report.dir).unwrap());
}

#[tokio::test]
async fn a_server_ignoring_range_or_a_bad_part_restarts_from_zero() {
    let hub = hub();
    hub.cut_next("model.safetensors", 1_000_000);
    let cache = tempfile::tempdir().unwrap();
    assert!(pull_default(&hub, cache.path()).await.0.is_err());
    hub.ignore_range(true);
    let (report, events) = pull_default(&hub, cache.path()).await;
    assert_eq!(report.unwrap().files[2].status, FileStatus::Downloaded);
    assert!(
        events.iter().any(|e| matches!(e,
        PullEvent::Restarted { reason, .. } if reason.contains("ignored the Range request"))),
        "{events:?}"
    );

    // A part whose bytes are not the file's: resumed, fails verification, fetched again whole.
    let hub = self::hub();
    let cache = tempfile::tempdir().unwrap();
    let dir = ModelCache::at(cache.path()).model_dir(&ModelRef::default_model());
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("model.safetensors.part"), vec![7u8; 4096]).unwrap();
    let (report, events) = pull_default(&hub, cache.path()).await;
    let report = report.unwrap();
    assert_eq!(report.files[2].status, FileStatus::Downloaded);
    assert_eq!(report.files[2].sha256, DEFAULT_PINS[2].sha256);
    assert!(
        events.iter().any(|e| matches!(e,
        PullEvent::Restarted { reason, .. } if reason.contains("did not verify"))),
        "{events:?}"
    );
    let ranges: Vec<Option<String>> = hub.requests().into_iter().map(|r| r.range).collect();
    assert_eq!(ranges, [None, None, Some("bytes=4096-".to_owned()), None]);
}

/// Issue 30, 30.27: a `.part` planted as a symbolic link to a file outside the cache made
/// `rag model pull` overwrite (or append to) that file. Fresh and resumed downloads, the
/// manifest's temporary file: the outside files are untouched and the model is pulled.
#[tokio::test]
async fn a_part_planted_as_a_link_never_writes_outside_the_cache() {
    let hub = hub();
    let cache = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let dir = ModelCache::at(cache.path()).model_dir(&ModelRef::default_model());
    std::fs::create_dir_all(&dir).unwrap();
    let mut victims = Vec::new();
    for part in [
        "config.json.part",
        "model.safetensors.part",
        "toolgate-model.json.part",
    ] {
        let victim = outside.path().join(part.replace(".part", ".victim"));
        std::fs::write(&victim, b"precious\n").unwrap();
        std::os::unix::fs::symlink(&victim, dir.join(part)).unwrap();
        victims.push(victim);
    }
    let (report, _) = pull_default(&hub, cache.path()).await;
    let report = report.unwrap();
    assert_eq!(statuses(&report), all(FileStatus::Downloaded));
    for victim in &victims {
        assert_eq!(
            std::fs::read(victim).unwrap(),
            b"precious\n",
            "{}",
            victim.display()
        );
    }
    assert!(no_parts(&dir));
    assert_golden(&LocalEmbedder::load(&report.dir).unwrap());
}

#[tokio::test]
async fn the_egress_guard_refuses_a_loopback_hub_unless_allowlisted() {
    let hub = hub();
    let cache = tempfile::tempdir().unwrap();
    let host = hub.host();
    for (policy, says) in [
        (EgressPolicy::default(), "refused: plain http to 127.0.0.1"),
        // Plain http allowed, but loopback is not a public address.
        (
            EgressPolicy::default().allow_plain_http(&host).unwrap(),
            "is loopback; to allow it add",
        ),
        // Loopback allowed as a destination, but plain http is still refused.
        (
            EgressPolicy::default().allow_host(&host).unwrap(),
            "[egress] allow_http",
        ),
    ] {
        let req = request(&hub, cache.path(), ModelRef::default_model(), policy);
        let err = pull(&req, &mut |_| {}).await.unwrap_err();
        assert!(matches!(err, PullError::Refused { .. }), "{err}");
        assert!(err.to_string().contains(says), "{err}");
    }
    assert!(hub.requests().is_empty(), "nothing may reach a refused hub");
    let policy = EgressPolicy::default()
        .allow_host(&host)
        .unwrap()
        .allow_plain_http(&host)
        .unwrap();
    let req = request(&hub, cache.path(), ModelRef::default_model(), policy);
    assert_eq!(pull(&req, &mut |_| {}).await.unwrap().trust, Trust::Pinned);
}

#[tokio::test]
async fn another_repository_is_recorded_on_first_use_and_held_to_it() {
    let hub = FakeHub::start();
    let model = ModelRef::new("acme/tiny-embedder", "v1").unwrap();
    for f in MODEL_FILES {
        hub.put(
            "acme/tiny-embedder",
            "v1",
            f,
            format!("{f} of acme").into_bytes(),
        );
    }
    let cache = tempfile::tempdir().unwrap();
    let req = request(&hub, cache.path(), model.clone(), allowing(&hub.url()));
    let report = pull(&req, &mut |_| {}).await.unwrap();
    assert_eq!(report.trust, Trust::FirstUse);
    let manifest = Manifest::read(&report.dir).unwrap().unwrap();
    assert!(!manifest.pinned);
    assert_eq!(manifest.files.len(), 3);
    assert_eq!(manifest.endpoint, hub.url());

    // The hub now serves other bytes for the same revision: refused against the record.
    std::fs::remove_file(report.dir.join("model.safetensors")).unwrap();
    hub.corrupt("model.safetensors");
    let err = pull(&req, &mut |_| {}).await.unwrap_err();
    let PullError::Mismatch { origin, .. } = &err else {
        panic!("{err}");
    };
    assert_eq!(origin, &Expected::Recorded(Manifest::path(&report.dir)));
    assert!(
        err.to_string().contains("recorded on the first pull"),
        "{err}"
    );
    // A missing file on the hub is a 404 with a hint, not a hang or a panic.
    let other = ModelRef::new("acme/missing", "v1").unwrap();
    let req = request(&hub, cache.path(), other, allowing(&hub.url()));
    let err = pull(&req, &mut |_| {}).await.unwrap_err().to_string();
    assert!(err.contains("answered 404: no such repository"), "{err}");
}
