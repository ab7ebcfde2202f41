//! The gRPC binding's generated code (`build.rs`, from the protos under `proto/`): prost
//! messages, a tonic client for each protocol version, and the protobuf JSON mapping
//! (pbjson) that turns a message into the same JSON the HTTP+JSON bindings read.

#![allow(
    unreachable_pub,
    dead_code,
    missing_docs,
    clippy::all,
    clippy::pedantic,
    rustdoc::all
)]

/// A2A v1.0 (`lf.a2a.v1`, the specification's `a2a.proto`).
pub(crate) mod v1 {
    include!(concat!(env!("OUT_DIR"), "/lf.a2a.v1.rs"));
    include!(concat!(env!("OUT_DIR"), "/lf.a2a.v1.serde.rs"));
}

/// A2A v0.3 (`a2a.v1`, the `a2a_v0_3.proto` `a2a-sdk` ships for v0.3 peers).
pub(crate) mod v03 {
    include!(concat!(env!("OUT_DIR"), "/a2a.v1.rs"));
    include!(concat!(env!("OUT_DIR"), "/a2a.v1.serde.rs"));
}

/// `google.rpc.Status` and its details (`ErrorInfo`): how a gRPC error names its A2A error.
pub(crate) mod rpc {
    include!(concat!(env!("OUT_DIR"), "/google.rpc.rs"));
}
