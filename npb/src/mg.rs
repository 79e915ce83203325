//! placeholder
use crate::common::{Class, NpbError, Report};
pub fn run(_world: &volpex::Communicator, _class: Class) -> Result<Report, NpbError> {
    Err(NpbError::Setup("not ported yet".into()))
}
