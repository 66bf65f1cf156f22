//! Steps that shape tables without a model: rows kept by a filter (`filter`) and tables of one
//! kind joined (`concat`). Not a model family: every other module of `steps` matches a family of
//! `yosoku-models`.

mod concat;
mod filter;

pub(crate) use concat::CONCAT;
pub(crate) use filter::FILTER;
