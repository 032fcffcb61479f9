//! `toolgate-sandbox __sandbox-exec REQUEST PROGRAM ARGS…`: the shell tool's sandbox helper
//! as a binary of its own, for programs that do not re-execute themselves (and for this
//! crate's tests). The `toolgate` binary does not need it.

fn main() {
    toolgate_tools::sandbox::run_helper_if_invoked();
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        b"toolgate-sandbox: started by the shell tool only (first argument __sandbox-exec)\n",
    );
    std::process::exit(2);
}
