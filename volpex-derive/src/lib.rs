//! `#[derive(Equivalence)]` for Volpex (re-exported as `volpex::Equivalence`): makes a
//! struct sendable in messages, as the `mpi` crate's derive does, including structs with
//! padding and `bool` or `char` fields, which are not plain data.
//!
//! ```ignore
//! #[derive(volpex::Equivalence, Clone, Debug, PartialEq)]
//! struct Particle { pos: [f64; 3], alive: bool, id: u32 }
//! world.process_at_rank(1).send(&particles[..])?;
//! ```
//!
//! The struct travels field by field in declaration order, each field in its own
//! message form and without padding (`volpex::datatype::derive` has the codecs): `bool`
//! as one byte, checked on receipt (a byte other than 0 or 1 is an error, never an invalid
//! `bool`), `char` as its code point, arrays element by element, every other field type
//! through its own `Equivalence` (plain data, or a struct deriving it). Owns only the
//! expansion; must never generate `unsafe` code. Enums, unions and tuple fields are
//! refused with a compile error naming them.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as Tokens;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{parse_macro_input, Data, DeriveInput, Fields, Type};

/// Implements `volpex::Equivalence` (and the buffer traits, so a single value is a
/// buffer) for a struct; see the crate documentation.
#[proc_macro_derive(Equivalence)]
pub fn derive_equivalence(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand(&input) {
        Ok(t) => t.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// How one field type travels: its size in bytes, and expressions that put a value
/// (`#v`, a reference) into `__out` and take one from `__r`.
struct Codec {
    wire: Tokens,
    put: Box<dyn Fn(Tokens) -> Tokens>,
    take: Tokens,
    fill: Tokens,
}

fn codec(ty: &Type) -> syn::Result<Codec> {
    let d = quote!(::volpex::datatype::derive);
    match ty {
        Type::Path(p) if p.qself.is_none() && p.path.is_ident("bool") => Ok(Codec {
            wire: quote!(1usize),
            put: Box::new(|v| quote!(::volpex::datatype::derive::put_bool(*#v, __out))),
            take: quote!(#d::take_bool(__r)?),
            fill: quote!(false),
        }),
        Type::Path(p) if p.qself.is_none() && p.path.is_ident("char") => Ok(Codec {
            wire: quote!(4usize),
            put: Box::new(|v| quote!(::volpex::datatype::derive::put_char(*#v, __out))),
            take: quote!(#d::take_char(__r)?),
            fill: quote!('\0'),
        }),
        Type::Array(a) => {
            let inner = codec(&a.elem)?;
            let (iw, len, it, ifill) = (inner.wire, &a.len, inner.take, inner.fill);
            let put_one = (inner.put)(quote!(__e));
            Ok(Codec {
                wire: quote!((#iw) * (#len)),
                put: Box::new(move |v| quote!(for __e in #v.iter() { #put_one; })),
                take: quote!(#d::take_array::<_, { #len }>(__r, |__r: &mut &[u8]| Ok(#it))?),
                fill: quote!(::core::array::from_fn(|_| #ifill)),
            })
        }
        Type::Group(g) => codec(&g.elem),
        Type::Paren(p) => codec(&p.elem),
        Type::Tuple(t) => Err(syn::Error::new(
            t.span(),
            "#[derive(Equivalence)]: tuple fields are not supported; use an array or a struct",
        )),
        Type::Reference(_) | Type::Ptr(_) | Type::Slice(_) | Type::TraitObject(_) => {
            Err(syn::Error::new(
                ty.span(),
                "#[derive(Equivalence)]: a field must hold its value (no references, pointers or slices)",
            ))
        }
        _ => Ok(Codec {
            wire: quote!(<#ty as ::volpex::Equivalence>::WIRE_BYTES),
            put: Box::new(|v| quote!(::volpex::datatype::derive::put(#v, __out))),
            take: quote!(#d::take::<#ty>(__r)?),
            fill: quote!(<#ty as ::volpex::Equivalence>::fill()),
        }),
    }
}

fn expand(input: &DeriveInput) -> syn::Result<Tokens> {
    let name = &input.ident;
    let fields = match &input.data {
        Data::Struct(s) => &s.fields,
        Data::Enum(e) => {
            return Err(syn::Error::new(
                e.enum_token.span(),
                "#[derive(Equivalence)] works on structs only, not enums",
            ))
        }
        Data::Union(u) => {
            return Err(syn::Error::new(
                u.union_token.span(),
                "#[derive(Equivalence)] works on structs only, not unions",
            ))
        }
    };
    let mut generics = input.generics.clone();
    for p in generics.type_params_mut() {
        p.bounds.push(syn::parse_quote!(::volpex::Equivalence));
    }
    let (impl_g, ty_g, where_g) = generics.split_for_impl();
    let mut wires = Vec::new();
    let mut puts = Vec::new();
    let mut takes = Vec::new();
    let mut fills = Vec::new();
    let members: Vec<Tokens> = match fields {
        Fields::Named(f) => f
            .named
            .iter()
            .map(|f| {
                let id = f.ident.clone();
                quote!(#id)
            })
            .collect(),
        Fields::Unnamed(f) => (0..f.unnamed.len())
            .map(|i| {
                let i = syn::Index::from(i);
                quote!(#i)
            })
            .collect(),
        Fields::Unit => Vec::new(),
    };
    for (f, m) in fields.iter().zip(&members) {
        let c = codec(&f.ty)?;
        let span = f.ty.span();
        wires.push(c.wire);
        let put = (c.put)(quote!((&__v.#m)));
        puts.push(quote_spanned!(span=> #put;));
        let t = c.take;
        let fl = c.fill;
        takes.push(quote!(#m: #t));
        fills.push(quote!(#m: #fl));
    }
    let d = quote!(::volpex::datatype::derive);
    Ok(quote! {
        #[allow(clippy::needless_question_mark)]
        impl #impl_g ::volpex::Equivalence for #name #ty_g #where_g {
            const WIRE_BYTES: usize = 0 #(+ #wires)*;
            fn encode(__items: &[Self]) -> ::std::borrow::Cow<'_, [u8]> {
                #d::encode_all(__items, Self::WIRE_BYTES, |__v: &Self, __out: &mut Vec<u8>| {
                    #(#puts)*
                })
            }
            fn decode(
                __bytes: &[u8],
                __items: &mut [Self],
            ) -> ::std::result::Result<(), ::volpex::Error> {
                #d::decode_all(__bytes, __items, Self::WIRE_BYTES, |__r: &mut &[u8]| {
                    Ok(Self { #(#takes),* })
                })
            }
            fn fill() -> Self {
                Self { #(#fills),* }
            }
        }
        impl #impl_g ::volpex::Buffer for #name #ty_g #where_g {
            fn bytes(&self) -> ::std::borrow::Cow<'_, [u8]> {
                #d::bytes_one(self)
            }
        }
        impl #impl_g ::volpex::BufferMut for #name #ty_g #where_g {
            fn target(&mut self) -> ::volpex::Target<'_> {
                #d::target_one(self)
            }
            fn elem_bytes(&self) -> usize {
                <Self as ::volpex::Equivalence>::WIRE_BYTES
            }
        }
        impl #impl_g ::volpex::Elements for #name #ty_g #where_g {
            type Elem = Self;
            fn elements(&self) -> &[Self] {
                ::std::slice::from_ref(self)
            }
        }
        impl #impl_g ::volpex::ElementsMut for #name #ty_g #where_g {
            fn elements_mut(&mut self) -> &mut [Self] {
                ::std::slice::from_mut(self)
            }
        }
    })
}
