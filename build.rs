//! Generates the gRPC binding's code from the protos under `proto/` (`src/a2a/grpc_pb.rs`
//! includes it): prost messages, tonic clients and servers and the protobuf JSON mapping of the
//! A2A messages (pbjson), compiled by `protox`, so no system `protoc` is needed. The servers
//! are the scripted agent's (`src/scripted_agent/grpc.rs`).

use prost::Message as _;

/// The files generated from; of their imports, `google/protobuf` is `pbjson_types` and
/// `google/api` (options only) is generated but not included.
const PROTOS: [&str; 4] = [
    "proto/a2a.proto",
    "proto/a2a_v0_3.proto",
    "proto/google/rpc/status.proto",
    "proto/google/rpc/error_details.proto",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let mut fds = protox::compile(PROTOS, ["proto"])?;
    // No comments in the generated code: the protos' comments hold examples in other
    // languages, which rustdoc would take for Rust doc tests.
    for file in &mut fds.file {
        file.source_code_info = None;
    }
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    pbjson_build::Builder::new()
        .register_descriptors(&fds.encode_to_vec())?
        .extern_path(".google.protobuf", "::pbjson_types")
        .out_dir(&out)
        .build(&[".lf.a2a.v1", ".a2a.v1"])?;
    tonic_prost_build::configure()
        .build_server(true)
        .build_transport(false)
        .compile_well_known_types(true)
        .extern_path(".google.protobuf", "::pbjson_types")
        .disable_comments(["."])
        .out_dir(&out)
        .compile_fds(fds)?;
    Ok(())
}
