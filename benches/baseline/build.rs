//! Generates prost types and pbjson's serde impls for the crate's own schema.

use prost::Message;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=../../proto/xla_data.proto");
    let descriptors = protox::compile(["xla_data.proto"], ["../../proto"])?;
    let bytes = descriptors.encode_to_vec();
    prost_build::Config::new().compile_fds(descriptors)?;
    pbjson_build::Builder::new()
        .register_descriptors(&bytes)?
        .build(&[".xla"])?;
    Ok(())
}
