//! Compiles `proto/xla_data.proto` into Rust types with prost-build.
//!
//! The schema is parsed by `protox`, a pure-Rust protobuf compiler, so building the
//! crate needs no `protoc` on the machine.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/xla_data.proto");
    let descriptors = protox::compile(["xla_data.proto"], ["proto"])?;
    prost_build::Config::new().compile_fds(descriptors)?;
    Ok(())
}
