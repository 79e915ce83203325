//! The Fortran interface (`mpif.h`, `use mpi`) for gfortran: one exported function per
//! MPI routine, named as gfortran names an external procedure (lower case, one trailing
//! underscore: `mpi_send_`), taking every argument by reference, `ierror` last, and the
//! hidden lengths of CHARACTER arguments after it. Each one reads its arguments, turns
//! the Fortran sentinels into the C ones and calls the C function of the same name, so
//! Fortran and C programs go through the same code.
//!
//! Owns what is Fortran's own: the sentinel common blocks (`MPI_BOTTOM`, `MPI_IN_PLACE`,
//! `MPI_STATUS_IGNORE`, `MPI_STATUSES_IGNORE`, `MPI_ERRCODES_IGNORE`), 1-based indices
//! (`MPI_WAITANY`, `MPI_WAITSOME`), INTEGER where C has `MPI_Aint` (the MPI-1 names),
//! blank-padded strings and attribute values by value. Must never check a buffer or
//! a handle itself: the C function does.
//!
//! Handles are INTEGERs equal to the C handles and a status is six INTEGERs laid out as
//! the C `MPI_Status`, so both pass through unchanged.

use std::ffi::{c_char, c_void, CStr};
use std::os::raw::c_int;
use std::sync::atomic::AtomicI32;
use std::sync::OnceLock;

use super::mpix::*;
use super::*;
use crate::error::{MpiError, Result};
use crate::handles::{class, MpiStatus, COMM_WORLD, IN_PLACE, TAG_KEYVAL, UNDEFINED};

/// A Fortran common block of `N` INTEGERs, defined here so that every program unit that
/// includes `mpif.h` shares one.
#[repr(C)]
pub struct Common<const N: usize>([AtomicI32; N]);

impl<const N: usize> Common<N> {
    const fn new() -> Common<N> {
        Common([const { AtomicI32::new(0) }; N])
    }
}

#[no_mangle]
pub static mpi_fortran_bottom_: Common<1> = Common::new();
#[no_mangle]
pub static mpi_fortran_in_place_: Common<1> = Common::new();
#[no_mangle]
pub static mpi_fortran_status_ignore_: Common<6> = Common::new();
#[no_mangle]
pub static mpi_fortran_statuses_ignore_: Common<6> = Common::new();
#[no_mangle]
pub static mpi_fortran_errcodes_ignore_: Common<1> = Common::new();
/// MPI_UNWEIGHTED, in C (`mpi.h`) as in Fortran.
#[no_mangle]
pub static mpi_fortran_unweighted_: Common<1> = Common::new();
/// MPI_WEIGHTS_EMPTY, in C (`mpi.h`) as in Fortran.
#[no_mangle]
pub static mpi_fortran_weights_empty_: Common<1> = Common::new();

/// The addresses a sentinel may have: ours, and the one the executable uses (a common
/// block in the program may be allocated there, with ours bound to it or not).
#[derive(Clone, Copy)]
struct Addrs([usize; 2]);

impl Addrs {
    fn of<T>(own: &T, name: &CStr) -> Addrs {
        let own = own as *const T as usize;
        Addrs([own, raw::global_address(name).unwrap_or(own)])
    }

    fn is<T>(self, p: *const T) -> bool {
        let p = p as usize;
        p != 0 && (p == self.0[0] || p == self.0[1])
    }
}

struct Sentinels {
    bottom: Addrs,
    in_place: Addrs,
    status: Addrs,
    statuses: Addrs,
    unweighted: Addrs,
    weights_empty: Addrs,
}

fn sentinels() -> &'static Sentinels {
    static S: OnceLock<Sentinels> = OnceLock::new();
    S.get_or_init(|| Sentinels {
        bottom: Addrs::of(&mpi_fortran_bottom_, c"mpi_fortran_bottom_"),
        in_place: Addrs::of(&mpi_fortran_in_place_, c"mpi_fortran_in_place_"),
        status: Addrs::of(&mpi_fortran_status_ignore_, c"mpi_fortran_status_ignore_"),
        statuses: Addrs::of(
            &mpi_fortran_statuses_ignore_,
            c"mpi_fortran_statuses_ignore_",
        ),
        unweighted: Addrs::of(&mpi_fortran_unweighted_, c"mpi_fortran_unweighted_"),
        weights_empty: Addrs::of(&mpi_fortran_weights_empty_, c"mpi_fortran_weights_empty_"),
    })
}

/// Which weights sentinel `p` is, if any (MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY: C's and
/// Fortran's are the same objects).
pub(super) fn weights_sentinel(p: *const c_int) -> Option<raw::Sentinel> {
    let s = sentinels();
    if s.unweighted.is(p) {
        Some(raw::Sentinel::Unweighted)
    } else if s.weights_empty.is(p) {
        Some(raw::Sentinel::WeightsEmpty)
    } else {
        None
    }
}

/// A choice buffer: MPI_BOTTOM becomes C's (null), MPI_IN_PLACE C's.
fn buffer(p: *const c_void) -> *const c_void {
    let s = sentinels();
    if s.bottom.is(p) {
        std::ptr::null()
    } else if s.in_place.is(p) {
        IN_PLACE as *const c_void
    } else {
        p
    }
}

/// A status argument: MPI_STATUS_IGNORE (or MPI_STATUSES_IGNORE) becomes null.
fn status(p: *mut c_int) -> *mut MpiStatus {
    let s = sentinels();
    if s.status.is(p) || s.statuses.is(p) {
        std::ptr::null_mut()
    } else {
        p as *mut MpiStatus
    }
}

/// An INTEGER (or INTEGER(KIND=MPI_ADDRESS_KIND)) passed by reference.
fn value<T: Copy>(p: *const T, what: &str) -> Result<T> {
    // SAFETY: `p` is an argument of a Fortran call, passed by reference: null or a
    // readable T (checked for null and alignment).
    unsafe { raw::input(p, what) }.copied()
}

/// Runs the body of Fortran routine `name`; an error in its own arguments goes to the
/// error handler of MPI_COMM_WORLD, as C's errors of the same kind.
fn shim(name: &'static str, body: impl FnOnce() -> Result<c_int>) -> c_int {
    match body() {
        Ok(code) => code,
        Err(e) => errhandler::raise(name, COMM_WORLD, e),
    }
}

/// Stores the return code in `ierror` (a program may pass none in the old style: null).
fn set_ierr(ierr: *mut c_int, code: c_int) {
    if ierr.is_null() {
        return;
    }
    // SAFETY: the ierror argument of a Fortran call: a writable INTEGER.
    if let Ok(e) = unsafe { raw::out(ierr, "ierror") } {
        *e = code;
    }
}

macro_rules! fty {
    (int) => { *const c_int };
    (aint) => { *const isize };
    (out) => { *mut c_int };
    (ints) => { *const c_int };
    (buf) => { *const c_void };
    (mbuf) => { *mut c_void };
    (st) => { *mut c_int };
    (cst) => { *const c_int };
    (aout) => { *mut isize };
    (aints) => { *const isize };
    (lout) => { *mut i64 };
    (lint) => { *const i64 };
    (ranges) => { *const [c_int; 3] };
    (userfn) => { Option<raw::UserFn> };
    (errfn) => { Option<raw::ErrFn> };
}

macro_rules! fconv {
    (int, $p:ident) => {
        value($p, stringify!($p))?
    };
    (aint, $p:ident) => {
        value($p, stringify!($p))?
    };
    (lint, $p:ident) => {
        value($p, stringify!($p))?
    };
    (out, $p:ident) => {
        $p
    };
    (ints, $p:ident) => {
        $p
    };
    (buf, $p:ident) => {
        buffer($p)
    };
    (mbuf, $p:ident) => {
        buffer($p as *const c_void) as *mut c_void
    };
    (st, $p:ident) => {
        status($p)
    };
    (cst, $p:ident) => {
        $p as *const MpiStatus
    };
    (aout, $p:ident) => {
        $p
    };
    (aints, $p:ident) => {
        $p
    };
    (lout, $p:ident) => {
        $p
    };
    (ranges, $p:ident) => {
        $p
    };
    (userfn, $p:ident) => {
        $p
    };
    (errfn, $p:ident) => {
        $p
    };
}

/// `mpi_x_ => MPI_X(arg: kind, ...)`: the Fortran routine with these arguments (and
/// `ierror`) calls the C function with them converted by kind.
macro_rules! fortran {
    ($($f:ident => $c:ident($($a:ident: $k:ident),*);)*) => {$(
        #[no_mangle]
        #[allow(unused_unsafe)] // some C functions take no pointer, so are not unsafe
        pub unsafe extern "C" fn $f($($a: fty!($k),)* ierr: *mut c_int) {
            let code = shim(stringify!($c), || {
                $(let $a = fconv!($k, $a);)*
                // SAFETY: the C function gets the Fortran caller's own pointers (and
                // the C sentinels for the Fortran ones), under the same MPI contract.
                Ok(unsafe { $c($($a),*) })
            });
            set_ierr(ierr, code);
        }
    )*};
}

fortran! {
    mpi_finalize_ => MPI_Finalize();
    mpi_initialized_ => MPI_Initialized(flag: out);
    mpi_finalized_ => MPI_Finalized(flag: out);
    mpi_query_thread_ => MPI_Query_thread(provided: out);
    mpi_is_thread_main_ => MPI_Is_thread_main(flag: out);
    mpi_get_version_ => MPI_Get_version(version: out, subversion: out);
    mpi_error_class_ => MPI_Error_class(code: int, errorclass: out);
    mpi_comm_set_errhandler_ => MPI_Comm_set_errhandler(comm: int, errhandler: int);
    mpi_errhandler_set_ => MPI_Errhandler_set(comm: int, errhandler: int);
    mpi_comm_get_errhandler_ => MPI_Comm_get_errhandler(comm: int, errhandler: out);
    mpi_errhandler_get_ => MPI_Errhandler_get(comm: int, errhandler: out);
    mpi_errhandler_free_ => MPI_Errhandler_free(errhandler: out);
    mpi_comm_call_errhandler_ => MPI_Comm_call_errhandler(comm: int, errorcode: int);

    mpi_send_ => MPI_Send(buf: buf, count: int, datatype: int, dest: int, tag: int, comm: int);
    mpi_ssend_ => MPI_Ssend(buf: buf, count: int, datatype: int, dest: int, tag: int, comm: int);
    mpi_bsend_ => MPI_Bsend(buf: buf, count: int, datatype: int, dest: int, tag: int, comm: int);
    mpi_rsend_ => MPI_Rsend(buf: buf, count: int, datatype: int, dest: int, tag: int, comm: int);
    mpi_isend_ => MPI_Isend(buf: buf, count: int, datatype: int, dest: int, tag: int, comm: int,
        request: out);
    mpi_issend_ => MPI_Issend(buf: buf, count: int, datatype: int, dest: int, tag: int,
        comm: int, request: out);
    mpi_ibsend_ => MPI_Ibsend(buf: buf, count: int, datatype: int, dest: int, tag: int,
        comm: int, request: out);
    mpi_irsend_ => MPI_Irsend(buf: buf, count: int, datatype: int, dest: int, tag: int,
        comm: int, request: out);
    mpi_recv_ => MPI_Recv(buf: mbuf, count: int, datatype: int, source: int, tag: int,
        comm: int, status: st);
    mpi_irecv_ => MPI_Irecv(buf: mbuf, count: int, datatype: int, source: int, tag: int,
        comm: int, request: out);
    mpi_sendrecv_ => MPI_Sendrecv(sendbuf: buf, sendcount: int, sendtype: int, dest: int,
        sendtag: int, recvbuf: mbuf, recvcount: int, recvtype: int, source: int,
        recvtag: int, comm: int, status: st);
    mpi_sendrecv_replace_ => MPI_Sendrecv_replace(buf: mbuf, count: int, datatype: int,
        dest: int, sendtag: int, source: int, recvtag: int, comm: int, status: st);
    mpi_probe_ => MPI_Probe(source: int, tag: int, comm: int, status: st);
    mpi_iprobe_ => MPI_Iprobe(source: int, tag: int, comm: int, flag: out, status: st);
    mpi_mprobe_ => MPI_Mprobe(source: int, tag: int, comm: int, message: out, status: st);
    mpi_improbe_ => MPI_Improbe(source: int, tag: int, comm: int, flag: out, message: out,
        status: st);
    mpi_mrecv_ => MPI_Mrecv(buf: mbuf, count: int, datatype: int, message: out, status: st);
    mpi_get_count_ => MPI_Get_count(status: cst, datatype: int, count: out);
    mpi_get_elements_ => MPI_Get_elements(status: cst, datatype: int, count: out);
    mpi_get_elements_x_ => MPI_Get_elements_x(status: cst, datatype: int, count: lout);
    mpi_test_cancelled_ => MPI_Test_cancelled(status: cst, flag: out);
    mpi_buffer_attach_ => MPI_Buffer_attach(buffer: mbuf, size: int);
    mpi_send_init_ => MPI_Send_init(buf: buf, count: int, datatype: int, dest: int, tag: int,
        comm: int, request: out);
    mpi_ssend_init_ => MPI_Ssend_init(buf: buf, count: int, datatype: int, dest: int,
        tag: int, comm: int, request: out);
    mpi_bsend_init_ => MPI_Bsend_init(buf: buf, count: int, datatype: int, dest: int,
        tag: int, comm: int, request: out);
    mpi_rsend_init_ => MPI_Rsend_init(buf: buf, count: int, datatype: int, dest: int,
        tag: int, comm: int, request: out);
    mpi_recv_init_ => MPI_Recv_init(buf: mbuf, count: int, datatype: int, source: int,
        tag: int, comm: int, request: out);
    mpi_start_ => MPI_Start(request: out);
    mpi_startall_ => MPI_Startall(count: int, requests: out);
    mpi_wait_ => MPI_Wait(request: out, status: st);
    mpi_test_ => MPI_Test(request: out, flag: out, status: st);
    mpi_request_get_status_ => MPI_Request_get_status(request: int, flag: out, status: st);
    mpi_request_free_ => MPI_Request_free(request: out);
    mpi_cancel_ => MPI_Cancel(request: out);
    mpi_waitall_ => MPI_Waitall(count: int, requests: out, statuses: st);
    mpi_testall_ => MPI_Testall(count: int, requests: out, flag: out, statuses: st);

    mpi_type_size_ => MPI_Type_size(datatype: int, size: out);
    mpi_type_size_x_ => MPI_Type_size_x(datatype: int, size: lout);
    mpi_type_get_extent_ => MPI_Type_get_extent(datatype: int, lb: aout, extent: aout);
    mpi_type_get_true_extent_ => MPI_Type_get_true_extent(datatype: int, lb: aout,
        extent: aout);
    mpi_type_contiguous_ => MPI_Type_contiguous(count: int, oldtype: int, newtype: out);
    mpi_type_vector_ => MPI_Type_vector(count: int, blocklength: int, stride: int,
        oldtype: int, newtype: out);
    mpi_type_create_hvector_ => MPI_Type_create_hvector(count: int, blocklength: int,
        stride: aint, oldtype: int, newtype: out);
    mpi_type_indexed_ => MPI_Type_indexed(count: int, blocklengths: ints, displs: ints,
        oldtype: int, newtype: out);
    mpi_type_create_hindexed_ => MPI_Type_create_hindexed(count: int, blocklengths: ints,
        displs: aints, oldtype: int, newtype: out);
    mpi_type_create_indexed_block_ => MPI_Type_create_indexed_block(count: int,
        blocklength: int, displs: ints, oldtype: int, newtype: out);
    mpi_type_create_hindexed_block_ => MPI_Type_create_hindexed_block(count: int,
        blocklength: int, displs: aints, oldtype: int, newtype: out);
    mpi_type_create_subarray_ => MPI_Type_create_subarray(ndims: int, sizes: ints,
        subsizes: ints, starts: ints, order: int, oldtype: int, newtype: out);
    mpi_type_create_struct_ => MPI_Type_create_struct(count: int, blocklengths: ints,
        displs: aints, types: ints, newtype: out);
    mpi_type_create_resized_ => MPI_Type_create_resized(oldtype: int, lb: aint, extent: aint,
        newtype: out);
    mpi_type_dup_ => MPI_Type_dup(oldtype: int, newtype: out);
    mpi_type_commit_ => MPI_Type_commit(datatype: out);
    mpi_type_free_ => MPI_Type_free(datatype: out);
    mpi_pack_ => MPI_Pack(inbuf: buf, incount: int, datatype: int, outbuf: mbuf, outsize: int,
        position: out, comm: int);
    mpi_unpack_ => MPI_Unpack(inbuf: buf, insize: int, position: out, outbuf: mbuf,
        outcount: int, datatype: int, comm: int);
    mpi_pack_size_ => MPI_Pack_size(incount: int, datatype: int, comm: int, size: out);
    mpi_get_address_ => MPI_Get_address(location: buf, address: aout);

    mpi_barrier_ => MPI_Barrier(comm: int);
    mpi_ibarrier_ => MPI_Ibarrier(comm: int, request: out);
    mpi_bcast_ => MPI_Bcast(buffer: mbuf, count: int, datatype: int, root: int, comm: int);
    mpi_ibcast_ => MPI_Ibcast(buffer: mbuf, count: int, datatype: int, root: int, comm: int,
        request: out);
    mpi_reduce_ => MPI_Reduce(sendbuf: buf, recvbuf: mbuf, count: int, datatype: int, op: int,
        root: int, comm: int);
    mpi_allreduce_ => MPI_Allreduce(sendbuf: buf, recvbuf: mbuf, count: int, datatype: int,
        op: int, comm: int);
    mpi_iallreduce_ => MPI_Iallreduce(sendbuf: buf, recvbuf: mbuf, count: int, datatype: int,
        op: int, comm: int, request: out);
    mpi_scan_ => MPI_Scan(sendbuf: buf, recvbuf: mbuf, count: int, datatype: int, op: int,
        comm: int);
    mpi_exscan_ => MPI_Exscan(sendbuf: buf, recvbuf: mbuf, count: int, datatype: int, op: int,
        comm: int);
    mpi_reduce_scatter_block_ => MPI_Reduce_scatter_block(sendbuf: buf, recvbuf: mbuf,
        recvcount: int, datatype: int, op: int, comm: int);
    mpi_reduce_scatter_ => MPI_Reduce_scatter(sendbuf: buf, recvbuf: mbuf, recvcounts: ints,
        datatype: int, op: int, comm: int);
    mpi_reduce_local_ => MPI_Reduce_local(inbuf: buf, inoutbuf: mbuf, count: int,
        datatype: int, op: int);
    mpi_gather_ => MPI_Gather(sendbuf: buf, sendcount: int, sendtype: int, recvbuf: mbuf,
        recvcount: int, recvtype: int, root: int, comm: int);
    mpi_gatherv_ => MPI_Gatherv(sendbuf: buf, sendcount: int, sendtype: int, recvbuf: mbuf,
        recvcounts: ints, displs: ints, recvtype: int, root: int, comm: int);
    mpi_scatter_ => MPI_Scatter(sendbuf: buf, sendcount: int, sendtype: int, recvbuf: mbuf,
        recvcount: int, recvtype: int, root: int, comm: int);
    mpi_scatterv_ => MPI_Scatterv(sendbuf: buf, sendcounts: ints, displs: ints, sendtype: int,
        recvbuf: mbuf, recvcount: int, recvtype: int, root: int, comm: int);
    mpi_allgather_ => MPI_Allgather(sendbuf: buf, sendcount: int, sendtype: int,
        recvbuf: mbuf, recvcount: int, recvtype: int, comm: int);
    mpi_allgatherv_ => MPI_Allgatherv(sendbuf: buf, sendcount: int, sendtype: int,
        recvbuf: mbuf, recvcounts: ints, displs: ints, recvtype: int, comm: int);
    mpi_alltoall_ => MPI_Alltoall(sendbuf: buf, sendcount: int, sendtype: int, recvbuf: mbuf,
        recvcount: int, recvtype: int, comm: int);
    mpi_alltoallv_ => MPI_Alltoallv(sendbuf: buf, sendcounts: ints, sdispls: ints,
        sendtype: int, recvbuf: mbuf, recvcounts: ints, rdispls: ints, recvtype: int,
        comm: int);
    mpi_op_commutative_ => MPI_Op_commutative(op: int, commute: out);
    // A Fortran `SUBROUTINE F(INVEC, INOUTVEC, LEN, TYPE)` takes its four arguments by
    // reference, as `MPI_User_function` does.
    mpi_op_create_ => MPI_Op_create(function: userfn, commute: int, op: out);
    mpi_op_free_ => MPI_Op_free(op: out);

    mpi_comm_size_ => MPI_Comm_size(comm: int, size: out);
    mpi_comm_rank_ => MPI_Comm_rank(comm: int, rank: out);
    mpi_comm_dup_ => MPI_Comm_dup(comm: int, newcomm: out);
    mpi_comm_split_ => MPI_Comm_split(comm: int, color: int, key: int, newcomm: out);
    mpi_comm_create_ => MPI_Comm_create(comm: int, group: int, newcomm: out);
    mpi_comm_free_ => MPI_Comm_free(comm: out);
    mpi_comm_compare_ => MPI_Comm_compare(comm1: int, comm2: int, result: out);
    mpi_comm_test_inter_ => MPI_Comm_test_inter(comm: int, flag: out);
    mpi_comm_group_ => MPI_Comm_group(comm: int, group: out);
    // A Fortran `SUBROUTINE H(COMM, ERROR_CODE)` takes both by reference, as the C
    // handler does (a window's and a file's handler too).
    mpi_comm_create_errhandler_ => MPI_Comm_create_errhandler(function: errfn,
        errhandler: out);
    mpi_errhandler_create_ => MPI_Comm_create_errhandler(function: errfn, errhandler: out);
    mpi_win_create_errhandler_ => MPI_Win_create_errhandler(function: errfn,
        errhandler: out);
    mpi_file_create_errhandler_ => MPI_File_create_errhandler(function: errfn,
        errhandler: out);
    mpi_comm_free_keyval_ => MPI_Comm_free_keyval(keyval: out);
    mpi_keyval_free_ => MPI_Comm_free_keyval(keyval: out);
    mpi_comm_delete_attr_ => MPI_Comm_delete_attr(comm: int, keyval: int);
    mpi_attr_delete_ => MPI_Attr_delete(comm: int, keyval: int);
    mpi_group_size_ => MPI_Group_size(group: int, size: out);
    mpi_group_rank_ => MPI_Group_rank(group: int, rank: out);
    mpi_group_incl_ => MPI_Group_incl(group: int, n: int, ranks: ints, newgroup: out);
    mpi_group_excl_ => MPI_Group_excl(group: int, n: int, ranks: ints, newgroup: out);
    mpi_group_translate_ranks_ => MPI_Group_translate_ranks(group1: int, n: int,
        ranks1: ints, group2: int, ranks2: out);
    mpi_group_compare_ => MPI_Group_compare(group1: int, group2: int, result: out);
    mpi_group_union_ => MPI_Group_union(group1: int, group2: int, newgroup: out);
    mpi_group_intersection_ => MPI_Group_intersection(group1: int, group2: int,
        newgroup: out);
    mpi_group_difference_ => MPI_Group_difference(group1: int, group2: int, newgroup: out);
    mpi_group_range_incl_ => MPI_Group_range_incl(group: int, n: int, ranges: ranges,
        newgroup: out);
    mpi_group_range_excl_ => MPI_Group_range_excl(group: int, n: int, ranges: ranges,
        newgroup: out);
    mpi_group_free_ => MPI_Group_free(group: out);

    mpi_dims_create_ => MPI_Dims_create(nnodes: int, ndims: int, dims: out);
    mpi_cart_create_ => MPI_Cart_create(comm: int, ndims: int, dims: ints, periods: ints,
        reorder: int, comm_cart: out);
    mpi_topo_test_ => MPI_Topo_test(comm: int, status: out);
    mpi_cartdim_get_ => MPI_Cartdim_get(comm: int, ndims: out);
    mpi_cart_get_ => MPI_Cart_get(comm: int, maxdims: int, dims: out, periods: out,
        coords: out);
    mpi_cart_rank_ => MPI_Cart_rank(comm: int, coords: ints, rank: out);
    mpi_cart_coords_ => MPI_Cart_coords(comm: int, rank: int, maxdims: int, coords: out);
    mpi_cart_shift_ => MPI_Cart_shift(comm: int, direction: int, disp: int, source: out,
        dest: out);
    mpi_cart_sub_ => MPI_Cart_sub(comm: int, remain_dims: ints, newcomm: out);
    mpi_cart_map_ => MPI_Cart_map(comm: int, ndims: int, dims: ints, periods: ints,
        newrank: out);

    mpi_info_create_ => MPI_Info_create(info: out);
    mpi_info_free_ => MPI_Info_free(info: out);

    mpix_regenerated_ => MPIX_Regenerated(flag: out);
}

/// The C type of a converted Fortran argument of each kind (see `fconv`).
macro_rules! cty {
    (int) => { c_int };
    (aint) => { isize };
    (lint) => { i64 };
    (out) => { *mut c_int };
    (ints) => { *const c_int };
    (buf) => { *const c_void };
    (mbuf) => { *mut c_void };
    (st) => { *mut MpiStatus };
    (cst) => { *const MpiStatus };
    (aout) => { *mut isize };
    (aints) => { *const isize };
    (lout) => { *mut i64 };
    (ranges) => { *const [c_int; 3] };
}

/// `fortran!` for C functions reached by their exported symbol (declared here from the
/// argument kinds) rather than by their Rust item: the Fortran routine does not depend on
/// which module of `ffi` defines the C function, or whether it is still in `stubs`.
macro_rules! fortran_c {
    ($($f:ident => $c:ident($($a:ident: $k:ident),*);)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $f($($a: fty!($k),)* ierr: *mut c_int) {
            extern "C" {
                fn $c($($a: cty!($k)),*) -> c_int;
            }
            let code = shim(stringify!($c), || {
                $(let $a = fconv!($k, $a);)*
                // SAFETY: the C function gets the Fortran caller's own pointers (and
                // the C sentinels for the Fortran ones), under the same MPI contract.
                Ok(unsafe { $c($($a),*) })
            });
            set_ierr(ierr, code);
        }
    )*};
}

// The rest of MPI 3.1 whose arguments are all integers, handles, buffers, addresses,
// offsets and statuses.
fortran_c! {
    mpi_accumulate_ => MPI_Accumulate(origin_addr: buf, origin_count: int,
        origin_datatype: int, target_rank: int, target_disp: aint, target_count: int,
        target_datatype: int, op: int, win: int);
    mpi_add_error_class_ => MPI_Add_error_class(errorclass: out);
    mpi_add_error_code_ => MPI_Add_error_code(errorclass: int, errorcode: out);
    mpi_alltoallw_ => MPI_Alltoallw(sendbuf: buf, sendcounts: ints, sdispls: ints,
        sendtypes: ints, recvbuf: mbuf, recvcounts: ints, rdispls: ints, recvtypes: ints,
        comm: int);
    mpi_comm_create_group_ => MPI_Comm_create_group(comm: int, group: int, tag: int,
        newcomm: out);
    mpi_comm_disconnect_ => MPI_Comm_disconnect(comm: out);
    mpi_comm_dup_with_info_ => MPI_Comm_dup_with_info(comm: int, info: int, newcomm: out);
    mpi_comm_get_info_ => MPI_Comm_get_info(comm: int, info_used: out);
    mpi_comm_get_parent_ => MPI_Comm_get_parent(parent: out);
    mpi_comm_idup_ => MPI_Comm_idup(comm: int, newcomm: out, request: out);
    mpi_comm_join_ => MPI_Comm_join(fd: int, intercomm: out);
    mpi_comm_remote_group_ => MPI_Comm_remote_group(comm: int, group: out);
    mpi_comm_remote_size_ => MPI_Comm_remote_size(comm: int, size: out);
    mpi_comm_set_info_ => MPI_Comm_set_info(comm: int, info: int);
    mpi_comm_split_type_ => MPI_Comm_split_type(comm: int, split_type: int, key: int,
        info: int, newcomm: out);
    mpi_compare_and_swap_ => MPI_Compare_and_swap(origin_addr: buf, compare_addr: buf,
        result_addr: mbuf, datatype: int, target_rank: int, target_disp: aint, win: int);
    mpi_dist_graph_create_ => MPI_Dist_graph_create(comm_old: int, n: int, nodes: ints,
        degrees: ints, targets: ints, weights: ints, info: int, reorder: int, newcomm: out);
    mpi_dist_graph_create_adjacent_ => MPI_Dist_graph_create_adjacent(comm_old: int,
        indegree: int, sources: ints, sourceweights: ints, outdegree: int, destinations: ints,
        destweights: ints, info: int, reorder: int, comm_dist_graph: out);
    mpi_dist_graph_neighbors_ => MPI_Dist_graph_neighbors(comm: int, maxindegree: int,
        sources: out, sourceweights: out, maxoutdegree: int, destinations: out,
        destweights: out);
    mpi_dist_graph_neighbors_count_ => MPI_Dist_graph_neighbors_count(comm: int,
        inneighbors: out, outneighbors: out, weighted: out);
    mpi_fetch_and_op_ => MPI_Fetch_and_op(origin_addr: buf, result_addr: mbuf, datatype: int,
        target_rank: int, target_disp: aint, op: int, win: int);
    mpi_file_call_errhandler_ => MPI_File_call_errhandler(fh: int, errorcode: int);
    mpi_file_close_ => MPI_File_close(fh: out);
    mpi_file_get_amode_ => MPI_File_get_amode(fh: int, amode: out);
    mpi_file_get_atomicity_ => MPI_File_get_atomicity(fh: int, flag: out);
    mpi_file_get_byte_offset_ => MPI_File_get_byte_offset(fh: int, offset: lint, disp: lout);
    mpi_file_get_errhandler_ => MPI_File_get_errhandler(file: int, errhandler: out);
    mpi_file_get_group_ => MPI_File_get_group(fh: int, group: out);
    mpi_file_get_info_ => MPI_File_get_info(fh: int, info_used: out);
    mpi_file_get_position_ => MPI_File_get_position(fh: int, offset: lout);
    mpi_file_get_position_shared_ => MPI_File_get_position_shared(fh: int, offset: lout);
    mpi_file_get_size_ => MPI_File_get_size(fh: int, size: lout);
    mpi_file_get_type_extent_ => MPI_File_get_type_extent(fh: int, datatype: int,
        extent: aout);
    mpi_file_iread_ => MPI_File_iread(fh: int, buf: mbuf, count: int, datatype: int,
        request: out);
    mpi_file_iread_all_ => MPI_File_iread_all(fh: int, buf: mbuf, count: int, datatype: int,
        request: out);
    mpi_file_iread_at_ => MPI_File_iread_at(fh: int, offset: lint, buf: mbuf, count: int,
        datatype: int, request: out);
    mpi_file_iread_at_all_ => MPI_File_iread_at_all(fh: int, offset: lint, buf: mbuf,
        count: int, datatype: int, request: out);
    mpi_file_iread_shared_ => MPI_File_iread_shared(fh: int, buf: mbuf, count: int,
        datatype: int, request: out);
    mpi_file_iwrite_ => MPI_File_iwrite(fh: int, buf: buf, count: int, datatype: int,
        request: out);
    mpi_file_iwrite_all_ => MPI_File_iwrite_all(fh: int, buf: buf, count: int, datatype: int,
        request: out);
    mpi_file_iwrite_at_ => MPI_File_iwrite_at(fh: int, offset: lint, buf: buf, count: int,
        datatype: int, request: out);
    mpi_file_iwrite_at_all_ => MPI_File_iwrite_at_all(fh: int, offset: lint, buf: buf,
        count: int, datatype: int, request: out);
    mpi_file_iwrite_shared_ => MPI_File_iwrite_shared(fh: int, buf: buf, count: int,
        datatype: int, request: out);
    mpi_file_preallocate_ => MPI_File_preallocate(fh: int, size: lint);
    mpi_file_read_ => MPI_File_read(fh: int, buf: mbuf, count: int, datatype: int, status: st);
    mpi_file_read_all_ => MPI_File_read_all(fh: int, buf: mbuf, count: int, datatype: int,
        status: st);
    mpi_file_read_all_begin_ => MPI_File_read_all_begin(fh: int, buf: mbuf, count: int,
        datatype: int);
    mpi_file_read_all_end_ => MPI_File_read_all_end(fh: int, buf: mbuf, status: st);
    mpi_file_read_at_ => MPI_File_read_at(fh: int, offset: lint, buf: mbuf, count: int,
        datatype: int, status: st);
    mpi_file_read_at_all_ => MPI_File_read_at_all(fh: int, offset: lint, buf: mbuf, count: int,
        datatype: int, status: st);
    mpi_file_read_at_all_begin_ => MPI_File_read_at_all_begin(fh: int, offset: lint, buf: mbuf,
        count: int, datatype: int);
    mpi_file_read_at_all_end_ => MPI_File_read_at_all_end(fh: int, buf: mbuf, status: st);
    mpi_file_read_ordered_ => MPI_File_read_ordered(fh: int, buf: mbuf, count: int,
        datatype: int, status: st);
    mpi_file_read_ordered_begin_ => MPI_File_read_ordered_begin(fh: int, buf: mbuf, count: int,
        datatype: int);
    mpi_file_read_ordered_end_ => MPI_File_read_ordered_end(fh: int, buf: mbuf, status: st);
    mpi_file_read_shared_ => MPI_File_read_shared(fh: int, buf: mbuf, count: int,
        datatype: int, status: st);
    mpi_file_seek_ => MPI_File_seek(fh: int, offset: lint, whence: int);
    mpi_file_seek_shared_ => MPI_File_seek_shared(fh: int, offset: lint, whence: int);
    mpi_file_set_atomicity_ => MPI_File_set_atomicity(fh: int, flag: int);
    mpi_file_set_errhandler_ => MPI_File_set_errhandler(file: int, errhandler: int);
    mpi_file_set_info_ => MPI_File_set_info(fh: int, info: int);
    mpi_file_set_size_ => MPI_File_set_size(fh: int, size: lint);
    mpi_file_sync_ => MPI_File_sync(fh: int);
    mpi_file_write_ => MPI_File_write(fh: int, buf: buf, count: int, datatype: int,
        status: st);
    mpi_file_write_all_ => MPI_File_write_all(fh: int, buf: buf, count: int, datatype: int,
        status: st);
    mpi_file_write_all_begin_ => MPI_File_write_all_begin(fh: int, buf: buf, count: int,
        datatype: int);
    mpi_file_write_all_end_ => MPI_File_write_all_end(fh: int, buf: buf, status: st);
    mpi_file_write_at_ => MPI_File_write_at(fh: int, offset: lint, buf: buf, count: int,
        datatype: int, status: st);
    mpi_file_write_at_all_ => MPI_File_write_at_all(fh: int, offset: lint, buf: buf,
        count: int, datatype: int, status: st);
    mpi_file_write_at_all_begin_ => MPI_File_write_at_all_begin(fh: int, offset: lint,
        buf: buf, count: int, datatype: int);
    mpi_file_write_at_all_end_ => MPI_File_write_at_all_end(fh: int, buf: buf, status: st);
    mpi_file_write_ordered_ => MPI_File_write_ordered(fh: int, buf: buf, count: int,
        datatype: int, status: st);
    mpi_file_write_ordered_begin_ => MPI_File_write_ordered_begin(fh: int, buf: buf,
        count: int, datatype: int);
    mpi_file_write_ordered_end_ => MPI_File_write_ordered_end(fh: int, buf: buf, status: st);
    mpi_file_write_shared_ => MPI_File_write_shared(fh: int, buf: buf, count: int,
        datatype: int, status: st);
    mpi_get_ => MPI_Get(origin_addr: mbuf, origin_count: int, origin_datatype: int,
        target_rank: int, target_disp: aint, target_count: int, target_datatype: int,
        win: int);
    mpi_get_accumulate_ => MPI_Get_accumulate(origin_addr: buf, origin_count: int,
        origin_datatype: int, result_addr: mbuf, result_count: int, result_datatype: int,
        target_rank: int, target_disp: aint, target_count: int, target_datatype: int, op: int,
        win: int);
    mpi_graph_create_ => MPI_Graph_create(comm_old: int, nnodes: int, index: ints, edges: ints,
        reorder: int, comm_graph: out);
    mpi_graph_get_ => MPI_Graph_get(comm: int, maxindex: int, maxedges: int, index: out,
        edges: out);
    mpi_graph_map_ => MPI_Graph_map(comm: int, nnodes: int, index: ints, edges: ints,
        newrank: out);
    mpi_graph_neighbors_ => MPI_Graph_neighbors(comm: int, rank: int, maxneighbors: int,
        neighbors: out);
    mpi_graph_neighbors_count_ => MPI_Graph_neighbors_count(comm: int, rank: int,
        nneighbors: out);
    mpi_graphdims_get_ => MPI_Graphdims_get(comm: int, nnodes: out, nedges: out);
    mpi_grequest_complete_ => MPI_Grequest_complete(request: int);
    mpi_iallgather_ => MPI_Iallgather(sendbuf: buf, sendcount: int, sendtype: int,
        recvbuf: mbuf, recvcount: int, recvtype: int, comm: int, request: out);
    mpi_iallgatherv_ => MPI_Iallgatherv(sendbuf: buf, sendcount: int, sendtype: int,
        recvbuf: mbuf, recvcounts: ints, displs: ints, recvtype: int, comm: int, request: out);
    mpi_ialltoall_ => MPI_Ialltoall(sendbuf: buf, sendcount: int, sendtype: int, recvbuf: mbuf,
        recvcount: int, recvtype: int, comm: int, request: out);
    mpi_ialltoallv_ => MPI_Ialltoallv(sendbuf: buf, sendcounts: ints, sdispls: ints,
        sendtype: int, recvbuf: mbuf, recvcounts: ints, rdispls: ints, recvtype: int,
        comm: int, request: out);
    mpi_ialltoallw_ => MPI_Ialltoallw(sendbuf: buf, sendcounts: ints, sdispls: ints,
        sendtypes: ints, recvbuf: mbuf, recvcounts: ints, rdispls: ints, recvtypes: ints,
        comm: int, request: out);
    mpi_iexscan_ => MPI_Iexscan(sendbuf: buf, recvbuf: mbuf, count: int, datatype: int,
        op: int, comm: int, request: out);
    mpi_igather_ => MPI_Igather(sendbuf: buf, sendcount: int, sendtype: int, recvbuf: mbuf,
        recvcount: int, recvtype: int, root: int, comm: int, request: out);
    mpi_igatherv_ => MPI_Igatherv(sendbuf: buf, sendcount: int, sendtype: int, recvbuf: mbuf,
        recvcounts: ints, displs: ints, recvtype: int, root: int, comm: int, request: out);
    mpi_imrecv_ => MPI_Imrecv(buf: mbuf, count: int, datatype: int, message: out,
        request: out);
    mpi_ineighbor_allgather_ => MPI_Ineighbor_allgather(sendbuf: buf, sendcount: int,
        sendtype: int, recvbuf: mbuf, recvcount: int, recvtype: int, comm: int, request: out);
    mpi_ineighbor_allgatherv_ => MPI_Ineighbor_allgatherv(sendbuf: buf, sendcount: int,
        sendtype: int, recvbuf: mbuf, recvcounts: ints, displs: ints, recvtype: int, comm: int,
        request: out);
    mpi_ineighbor_alltoall_ => MPI_Ineighbor_alltoall(sendbuf: buf, sendcount: int,
        sendtype: int, recvbuf: mbuf, recvcount: int, recvtype: int, comm: int, request: out);
    mpi_ineighbor_alltoallv_ => MPI_Ineighbor_alltoallv(sendbuf: buf, sendcounts: ints,
        sdispls: ints, sendtype: int, recvbuf: mbuf, recvcounts: ints, rdispls: ints,
        recvtype: int, comm: int, request: out);
    mpi_ineighbor_alltoallw_ => MPI_Ineighbor_alltoallw(sendbuf: buf, sendcounts: ints,
        sdispls: aints, sendtypes: ints, recvbuf: mbuf, recvcounts: ints, rdispls: aints,
        recvtypes: ints, comm: int, request: out);
    mpi_info_dup_ => MPI_Info_dup(info: int, newinfo: out);
    mpi_info_get_nkeys_ => MPI_Info_get_nkeys(info: int, nkeys: out);
    mpi_intercomm_create_ => MPI_Intercomm_create(local_comm: int, local_leader: int,
        peer_comm: int, remote_leader: int, tag: int, newintercomm: out);
    mpi_intercomm_merge_ => MPI_Intercomm_merge(intercomm: int, high: int, newintracomm: out);
    mpi_ireduce_ => MPI_Ireduce(sendbuf: buf, recvbuf: mbuf, count: int, datatype: int,
        op: int, root: int, comm: int, request: out);
    mpi_ireduce_scatter_ => MPI_Ireduce_scatter(sendbuf: buf, recvbuf: mbuf, recvcounts: ints,
        datatype: int, op: int, comm: int, request: out);
    mpi_ireduce_scatter_block_ => MPI_Ireduce_scatter_block(sendbuf: buf, recvbuf: mbuf,
        recvcount: int, datatype: int, op: int, comm: int, request: out);
    mpi_iscan_ => MPI_Iscan(sendbuf: buf, recvbuf: mbuf, count: int, datatype: int, op: int,
        comm: int, request: out);
    mpi_iscatter_ => MPI_Iscatter(sendbuf: buf, sendcount: int, sendtype: int, recvbuf: mbuf,
        recvcount: int, recvtype: int, root: int, comm: int, request: out);
    mpi_iscatterv_ => MPI_Iscatterv(sendbuf: buf, sendcounts: ints, displs: ints,
        sendtype: int, recvbuf: mbuf, recvcount: int, recvtype: int, root: int, comm: int,
        request: out);
    mpi_neighbor_allgather_ => MPI_Neighbor_allgather(sendbuf: buf, sendcount: int,
        sendtype: int, recvbuf: mbuf, recvcount: int, recvtype: int, comm: int);
    mpi_neighbor_allgatherv_ => MPI_Neighbor_allgatherv(sendbuf: buf, sendcount: int,
        sendtype: int, recvbuf: mbuf, recvcounts: ints, displs: ints, recvtype: int,
        comm: int);
    mpi_neighbor_alltoall_ => MPI_Neighbor_alltoall(sendbuf: buf, sendcount: int,
        sendtype: int, recvbuf: mbuf, recvcount: int, recvtype: int, comm: int);
    mpi_neighbor_alltoallv_ => MPI_Neighbor_alltoallv(sendbuf: buf, sendcounts: ints,
        sdispls: ints, sendtype: int, recvbuf: mbuf, recvcounts: ints, rdispls: ints,
        recvtype: int, comm: int);
    mpi_neighbor_alltoallw_ => MPI_Neighbor_alltoallw(sendbuf: buf, sendcounts: ints,
        sdispls: aints, sendtypes: ints, recvbuf: mbuf, recvcounts: ints, rdispls: aints,
        recvtypes: ints, comm: int);
    mpi_put_ => MPI_Put(origin_addr: buf, origin_count: int, origin_datatype: int,
        target_rank: int, target_disp: aint, target_count: int, target_datatype: int,
        win: int);
    mpi_raccumulate_ => MPI_Raccumulate(origin_addr: buf, origin_count: int,
        origin_datatype: int, target_rank: int, target_disp: aint, target_count: int,
        target_datatype: int, op: int, win: int, request: out);
    mpi_rget_ => MPI_Rget(origin_addr: mbuf, origin_count: int, origin_datatype: int,
        target_rank: int, target_disp: aint, target_count: int, target_datatype: int, win: int,
        request: out);
    mpi_rget_accumulate_ => MPI_Rget_accumulate(origin_addr: buf, origin_count: int,
        origin_datatype: int, result_addr: mbuf, result_count: int, result_datatype: int,
        target_rank: int, target_disp: aint, target_count: int, target_datatype: int, op: int,
        win: int, request: out);
    mpi_rput_ => MPI_Rput(origin_addr: buf, origin_count: int, origin_datatype: int,
        target_rank: int, target_disp: aint, target_count: int, target_datatype: int, win: int,
        request: out);
    mpi_status_set_cancelled_ => MPI_Status_set_cancelled(status: st, flag: int);
    mpi_status_set_elements_ => MPI_Status_set_elements(status: st, datatype: int, count: int);
    mpi_status_set_elements_x_ => MPI_Status_set_elements_x(status: st, datatype: int,
        count: lint);
    mpi_type_create_darray_ => MPI_Type_create_darray(size: int, rank: int, ndims: int,
        gsize_array: ints, distrib_array: ints, darg_array: ints, psize_array: ints,
        order: int, oldtype: int, newtype: out);
    mpi_type_create_f90_complex_ => MPI_Type_create_f90_complex(p: int, r: int, newtype: out);
    mpi_type_create_f90_integer_ => MPI_Type_create_f90_integer(r: int, newtype: out);
    mpi_type_create_f90_real_ => MPI_Type_create_f90_real(p: int, r: int, newtype: out);
    mpi_type_delete_attr_ => MPI_Type_delete_attr(type_: int, type_keyval: int);
    mpi_type_free_keyval_ => MPI_Type_free_keyval(type_keyval: out);
    mpi_type_get_contents_ => MPI_Type_get_contents(mtype: int, max_integers: int,
        max_addresses: int, max_datatypes: int, array_of_integers: out,
        array_of_addresses: aout, array_of_datatypes: out);
    mpi_type_get_envelope_ => MPI_Type_get_envelope(type_: int, num_integers: out,
        num_addresses: out, num_datatypes: out, combiner: out);
    mpi_type_get_extent_x_ => MPI_Type_get_extent_x(type_: int, lb: lout, extent: lout);
    mpi_type_get_true_extent_x_ => MPI_Type_get_true_extent_x(datatype: int, true_lb: lout,
        true_extent: lout);
    mpi_type_match_size_ => MPI_Type_match_size(typeclass: int, size: int, type_: out);
    mpi_win_allocate_ => MPI_Win_allocate(size: aint, disp_unit: int, info: int, comm: int,
        baseptr: mbuf, win: out);
    mpi_win_allocate_shared_ => MPI_Win_allocate_shared(size: aint, disp_unit: int,
        info: int, comm: int, baseptr: mbuf, win: out);
    mpi_win_shared_query_ => MPI_Win_shared_query(win: int, rank: int, size: aout,
        disp_unit: out, baseptr: mbuf);
    mpi_win_attach_ => MPI_Win_attach(win: int, base: mbuf, size: aint);
    mpi_win_call_errhandler_ => MPI_Win_call_errhandler(win: int, errorcode: int);
    mpi_win_complete_ => MPI_Win_complete(win: int);
    mpi_win_create_ => MPI_Win_create(base: mbuf, size: aint, disp_unit: int, info: int,
        comm: int, win: out);
    mpi_win_create_dynamic_ => MPI_Win_create_dynamic(info: int, comm: int, win: out);
    mpi_win_delete_attr_ => MPI_Win_delete_attr(win: int, win_keyval: int);
    mpi_win_detach_ => MPI_Win_detach(win: int, base: buf);
    mpi_win_fence_ => MPI_Win_fence(assert: int, win: int);
    mpi_win_flush_ => MPI_Win_flush(rank: int, win: int);
    mpi_win_flush_all_ => MPI_Win_flush_all(win: int);
    mpi_win_flush_local_ => MPI_Win_flush_local(rank: int, win: int);
    mpi_win_flush_local_all_ => MPI_Win_flush_local_all(win: int);
    mpi_win_free_ => MPI_Win_free(win: out);
    mpi_win_free_keyval_ => MPI_Win_free_keyval(win_keyval: out);
    mpi_win_get_errhandler_ => MPI_Win_get_errhandler(win: int, errhandler: out);
    mpi_win_get_group_ => MPI_Win_get_group(win: int, group: out);
    mpi_win_get_info_ => MPI_Win_get_info(win: int, info_used: out);
    mpi_win_lock_ => MPI_Win_lock(lock_type: int, rank: int, assert: int, win: int);
    mpi_win_lock_all_ => MPI_Win_lock_all(assert: int, win: int);
    mpi_win_post_ => MPI_Win_post(group: int, assert: int, win: int);
    mpi_win_set_errhandler_ => MPI_Win_set_errhandler(win: int, errhandler: int);
    mpi_win_set_info_ => MPI_Win_set_info(win: int, info: int);
    mpi_win_start_ => MPI_Win_start(group: int, assert: int, win: int);
    mpi_win_sync_ => MPI_Win_sync(win: int);
    mpi_win_test_ => MPI_Win_test(win: int, flag: out);
    mpi_win_unlock_ => MPI_Win_unlock(rank: int, win: int);
    mpi_win_unlock_all_ => MPI_Win_unlock_all(win: int);
    mpi_win_wait_ => MPI_Win_wait(win: int);
}

// ---- Environment ----

#[no_mangle]
pub unsafe extern "C" fn mpi_init_(ierr: *mut c_int) {
    // SAFETY: MPI_Init ignores argc and argv (MPI-3.1 section 8.7 lets them be null).
    let code = unsafe { MPI_Init(std::ptr::null_mut(), std::ptr::null_mut()) };
    set_ierr(ierr, code);
}

#[no_mangle]
pub unsafe extern "C" fn mpi_init_thread_(
    required: *const c_int,
    provided: *mut c_int,
    ierr: *mut c_int,
) {
    let code = shim("MPI_Init_thread", || {
        let required = value(required, "required")?;
        // SAFETY: null argc and argv; `provided` is the caller's INTEGER.
        Ok(unsafe {
            MPI_Init_thread(
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                required,
                provided,
            )
        })
    });
    set_ierr(ierr, code);
}

#[no_mangle]
pub unsafe extern "C" fn mpi_abort_(comm: *const c_int, errorcode: *const c_int, ierr: *mut c_int) {
    let code = shim("MPI_Abort", || {
        Ok(MPI_Abort(
            value(comm, "comm")?,
            value(errorcode, "errorcode")?,
        ))
    });
    set_ierr(ierr, code);
}

#[no_mangle]
pub extern "C" fn mpi_wtime_() -> f64 {
    MPI_Wtime()
}

#[no_mangle]
pub extern "C" fn mpi_wtick_() -> f64 {
    MPI_Wtick()
}

/// MPI_PCONTROL: profiling control, which MPI lets an implementation ignore.
#[no_mangle]
pub extern "C" fn mpi_pcontrol_(_level: *const c_int) {}

// ---- Strings: blank-padded, hidden lengths after ierror ----

/// Calls a C function that fills a NUL-terminated string of at most `cap` bytes, and
/// copies what it wrote into the Fortran string `out` of `len` bytes.
fn string_out(
    out: *mut c_char,
    len: usize,
    resultlen: *mut c_int,
    cap: usize,
    fill: impl FnOnce(*mut c_char, *mut c_int) -> c_int,
) -> Result<c_int> {
    let mut buf = vec![0 as c_char; cap + 1];
    let mut n: c_int = 0;
    let code = fill(buf.as_mut_ptr(), &mut n);
    if code != class::SUCCESS {
        return Ok(code);
    }
    let bytes: Vec<u8> = buf[..usize::try_from(n).unwrap_or(0).min(cap)]
        .iter()
        .map(|&c| c as u8)
        .collect();
    let s = String::from_utf8_lossy(&bytes);
    // SAFETY: the CHARACTER argument of `len` bytes (its hidden length).
    let copied = unsafe { raw::put_fortran_string(out, len, &s) }?;
    set(resultlen, "resultlen", copied as c_int)?;
    Ok(class::SUCCESS)
}

/// A Fortran string as a C string (trailing blanks dropped).
fn c_string(p: *const c_char, len: usize, what: &str) -> Result<std::ffi::CString> {
    // SAFETY: a CHARACTER argument of `len` bytes (its hidden length).
    let s = unsafe { raw::fortran_string(p, len, what) }?;
    std::ffi::CString::new(s).map_err(|_| MpiError::arg(format!("{what} holds a NUL byte")))
}

/// `mpi_x_ => MPI_X(cap)` or `mpi_x_ => MPI_X(cap, handle)`: a Fortran routine
/// `([INTEGER HANDLE,] CHARACTER*(*) STRING, INTEGER RESULTLEN, IERROR)` (the string's
/// hidden length last) over the C function that fills a string of at most `cap` bytes;
/// the string comes back blank-padded.
macro_rules! string_out_fns {
    ($($f:ident => $c:ident($cap:ident $(, $h:ident)?);)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $f(
            $($h: *const c_int,)?
            string: *mut c_char,
            resultlen: *mut c_int,
            ierr: *mut c_int,
            string_len: usize,
        ) {
            let code = shim(stringify!($c), || {
                $(let $h = value($h, stringify!($h))?;)?
                // SAFETY: `p` holds `cap` + 1 bytes, `n` is a local.
                string_out(string, string_len, resultlen, $cap, |p, n| unsafe {
                    $c($($h,)? p, n)
                })
            });
            set_ierr(ierr, code);
        }
    )*};
}

string_out_fns! {
    mpi_get_processor_name_ => MPI_Get_processor_name(MAX_PROCESSOR_NAME);
    mpi_get_library_version_ => MPI_Get_library_version(MAX_LIBRARY_VERSION_STRING);
    mpi_error_string_ => MPI_Error_string(MAX_ERROR_STRING, errorcode);
    mpi_comm_get_name_ => MPI_Comm_get_name(MAX_OBJECT_NAME, comm);
    mpi_type_get_name_ => MPI_Type_get_name(MAX_OBJECT_NAME, datatype);
    mpi_win_get_name_ => MPI_Win_get_name(MAX_OBJECT_NAME, win);
}

/// `mpi_x_ => MPI_X(handle, "what")`: a Fortran routine `(INTEGER HANDLE, CHARACTER*(*)
/// STRING, IERROR)` (the string's hidden length last, trailing blanks dropped) over the
/// C function taking the handle and a C string; `what` names the string in errors.
macro_rules! string_in_fns {
    ($($f:ident => $c:ident($h:ident, $what:literal);)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $f(
            $h: *const c_int,
            string: *const c_char,
            ierr: *mut c_int,
            string_len: usize,
        ) {
            let code = shim(stringify!($c), || {
                let $h = value($h, stringify!($h))?;
                let s = c_string(string, string_len, $what)?;
                // SAFETY: a NUL-terminated string we own.
                Ok(unsafe { $c($h, s.as_ptr()) })
            });
            set_ierr(ierr, code);
        }
    )*};
}

string_in_fns! {
    mpi_comm_set_name_ => MPI_Comm_set_name(comm, "comm_name");
    mpi_type_set_name_ => MPI_Type_set_name(datatype, "type_name");
    mpi_win_set_name_ => MPI_Win_set_name(win, "win_name");
    mpi_add_error_string_ => MPI_Add_error_string(errorcode, "string");
    mpi_info_delete_ => MPI_Info_delete(info, "key");
}

#[no_mangle]
pub unsafe extern "C" fn mpi_info_set_(
    info: *const c_int,
    key: *const c_char,
    val: *const c_char,
    ierr: *mut c_int,
    key_len: usize,
    val_len: usize,
) {
    let code = shim("MPI_Info_set", || {
        let i = value(info, "info")?;
        let (k, v) = (
            c_string(key, key_len, "key")?,
            c_string(val, val_len, "value")?,
        );
        // SAFETY: NUL-terminated strings we own.
        Ok(unsafe { MPI_Info_set(i, k.as_ptr(), v.as_ptr()) })
    });
    set_ierr(ierr, code);
}

#[no_mangle]
pub unsafe extern "C" fn mpi_info_get_(
    info: *const c_int,
    key: *const c_char,
    valuelen: *const c_int,
    val: *mut c_char,
    flag: *mut c_int,
    ierr: *mut c_int,
    key_len: usize,
    val_len: usize,
) {
    let code = shim("MPI_Info_get", || {
        let i = value(info, "info")?;
        let k = c_string(key, key_len, "key")?;
        let cap = cnt(value(valuelen, "valuelen")?)?.min(val_len);
        let mut buf = vec![0 as c_char; cap + 1];
        let mut found: c_int = 0;
        // SAFETY: `buf` holds `cap` + 1 bytes, `found` is a local.
        let code =
            unsafe { MPI_Info_get(i, k.as_ptr(), cap as c_int, buf.as_mut_ptr(), &mut found) };
        if code != class::SUCCESS {
            return Ok(code);
        }
        set(flag, "flag", found)?;
        if found != 0 {
            // SAFETY: `buf` is NUL-terminated (MPI_Info_get writes at most `cap` bytes
            // and the NUL, into a buffer that was zeroed).
            let v = unsafe { CStr::from_ptr(buf.as_ptr()) }
                .to_string_lossy()
                .into_owned();
            // SAFETY: the CHARACTER argument of `val_len` bytes; the value is left
            // alone when the key is not set.
            unsafe { raw::put_fortran_string(val, val_len, &v) }?;
        }
        Ok(code)
    });
    set_ierr(ierr, code);
}

// ---- MPI-IO routines with CHARACTER arguments ----

#[no_mangle]
pub unsafe extern "C" fn mpi_file_open_(
    comm: *const c_int,
    filename: *const c_char,
    amode: *const c_int,
    info: *const c_int,
    fh: *mut c_int,
    ierr: *mut c_int,
    filename_len: usize,
) {
    let code = shim("MPI_File_open", || {
        let (c, a, i) = (
            value(comm, "comm")?,
            value(amode, "amode")?,
            value(info, "info")?,
        );
        let name = c_string(filename, filename_len, "filename")?;
        let mut h: c_int = 0;
        // SAFETY: a NUL-terminated string we own and a local handle.
        let code = unsafe { MPI_File_open(c, name.as_ptr(), a, i, &mut h) };
        set(fh, "fh", h)?;
        Ok(code)
    });
    set_ierr(ierr, code);
}

#[no_mangle]
pub unsafe extern "C" fn mpi_file_delete_(
    filename: *const c_char,
    info: *const c_int,
    ierr: *mut c_int,
    filename_len: usize,
) {
    let code = shim("MPI_File_delete", || {
        let i = value(info, "info")?;
        let name = c_string(filename, filename_len, "filename")?;
        // SAFETY: a NUL-terminated string we own.
        Ok(unsafe { MPI_File_delete(name.as_ptr(), i) })
    });
    set_ierr(ierr, code);
}

#[no_mangle]
pub unsafe extern "C" fn mpi_file_set_view_(
    fh: *const c_int,
    disp: *const i64,
    etype: *const c_int,
    filetype: *const c_int,
    datarep: *const c_char,
    info: *const c_int,
    ierr: *mut c_int,
    datarep_len: usize,
) {
    let code = shim("MPI_File_set_view", || {
        let (f, d) = (value(fh, "fh")?, value(disp, "disp")?);
        let (e, t, i) = (
            value(etype, "etype")?,
            value(filetype, "filetype")?,
            value(info, "info")?,
        );
        let rep = c_string(datarep, datarep_len, "datarep")?;
        // SAFETY: a NUL-terminated string we own.
        Ok(unsafe { MPI_File_set_view(f, d, e, t, rep.as_ptr(), i) })
    });
    set_ierr(ierr, code);
}

#[no_mangle]
pub unsafe extern "C" fn mpi_file_get_view_(
    fh: *const c_int,
    disp: *mut i64,
    etype: *mut c_int,
    filetype: *mut c_int,
    datarep: *mut c_char,
    ierr: *mut c_int,
    datarep_len: usize,
) {
    let code = shim("MPI_File_get_view", || {
        let f = value(fh, "fh")?;
        let (mut d, mut e, mut t) = (0i64, 0, 0);
        let mut rep = [0 as c_char; 129];
        // SAFETY: locals, and a buffer of MPI_MAX_DATAREP_STRING + 1 bytes.
        let code = unsafe { MPI_File_get_view(f, &mut d, &mut e, &mut t, rep.as_mut_ptr()) };
        if code != class::SUCCESS {
            return Ok(code);
        }
        set(disp, "disp", d)?;
        set(etype, "etype", e)?;
        set(filetype, "filetype", t)?;
        // SAFETY: `rep` is NUL-terminated (zeroed, and MPI_File_get_view writes less).
        let r = unsafe { CStr::from_ptr(rep.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        // SAFETY: the CHARACTER argument of `datarep_len` bytes.
        unsafe { raw::put_fortran_string(datarep, datarep_len, &r) }?;
        Ok(code)
    });
    set_ierr(ierr, code);
}

// ---- Completion with 1-based indices ----

/// A C index (0-based, or MPI_UNDEFINED) as Fortran's (1-based).
fn one_based(i: c_int) -> c_int {
    if i == UNDEFINED || i < 0 {
        i
    } else {
        i + 1
    }
}

#[no_mangle]
pub unsafe extern "C" fn mpi_waitany_(
    count: *const c_int,
    requests: *mut c_int,
    index: *mut c_int,
    status_: *mut c_int,
    ierr: *mut c_int,
) {
    let code = shim("MPI_Waitany", || {
        let mut i = UNDEFINED;
        // SAFETY: the caller's requests and status; `i` is a local.
        let code =
            unsafe { MPI_Waitany(value(count, "count")?, requests, &mut i, status(status_)) };
        if code == class::SUCCESS {
            set(index, "index", one_based(i))?;
        }
        Ok(code)
    });
    set_ierr(ierr, code);
}

#[no_mangle]
pub unsafe extern "C" fn mpi_testany_(
    count: *const c_int,
    requests: *mut c_int,
    index: *mut c_int,
    flag: *mut c_int,
    status_: *mut c_int,
    ierr: *mut c_int,
) {
    let code = shim("MPI_Testany", || {
        let mut i = UNDEFINED;
        // SAFETY: the caller's requests, flag and status; `i` is a local.
        let code = unsafe {
            MPI_Testany(
                value(count, "count")?,
                requests,
                &mut i,
                flag,
                status(status_),
            )
        };
        if code == class::SUCCESS {
            set(index, "index", one_based(i))?;
        }
        Ok(code)
    });
    set_ierr(ierr, code);
}

/// MPI_WAITSOME (`block`) and MPI_TESTSOME with the routine's arguments (incount,
/// requests, outcount, indices, statuses): the C function, then the indices one-based.
fn some(
    block: bool,
    (incount, requests, outcount, indices, statuses): (
        *const c_int,
        *mut c_int,
        *mut c_int,
        *mut c_int,
        *mut c_int,
    ),
) -> Result<c_int> {
    let n = value(incount, "incount")?;
    let sts = status(statuses);
    // SAFETY: the caller's arguments, as MPI_Waitsome / MPI_Testsome take them.
    let code = unsafe {
        if block {
            MPI_Waitsome(n, requests, outcount, indices, sts)
        } else {
            MPI_Testsome(n, requests, outcount, indices, sts)
        }
    };
    if code != class::SUCCESS {
        return Ok(code);
    }
    let done = value(outcount as *const c_int, "outcount")?;
    if done > 0 {
        // SAFETY: `incount` indices, of which the C function wrote `done`.
        let idx = unsafe { raw::array_mut(indices, cnt(done)?, "array_of_indices") }?;
        for i in idx {
            *i = one_based(*i);
        }
    }
    Ok(code)
}

#[no_mangle]
pub unsafe extern "C" fn mpi_waitsome_(
    incount: *const c_int,
    requests: *mut c_int,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut c_int,
    ierr: *mut c_int,
) {
    let args = (incount, requests, outcount, indices, statuses);
    set_ierr(ierr, shim("MPI_Waitsome", || some(true, args)));
}

#[no_mangle]
pub unsafe extern "C" fn mpi_testsome_(
    incount: *const c_int,
    requests: *mut c_int,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut c_int,
    ierr: *mut c_int,
) {
    let args = (incount, requests, outcount, indices, statuses);
    set_ierr(ierr, shim("MPI_Testsome", || some(false, args)));
}

#[no_mangle]
pub unsafe extern "C" fn mpi_buffer_detach_(
    _buffer: *mut c_void,
    size: *mut c_int,
    ierr: *mut c_int,
) {
    // In Fortran the first argument is the buffer itself, not where to store its address.
    let mut addr: *mut c_void = std::ptr::null_mut();
    // SAFETY: `addr` is a local `void *`; `size` the caller's INTEGER.
    let code = unsafe { MPI_Buffer_detach(&mut addr as *mut *mut c_void as *mut c_void, size) };
    set_ierr(ierr, code);
}

// ---- The MPI-1 names that take INTEGER where C has MPI_Aint ----

/// Calls `f` with a local MPI_Aint and stores it in the INTEGER `out`.
fn int_out(out: *mut c_int, what: &str, f: impl FnOnce(&mut isize) -> c_int) -> Result<c_int> {
    let mut v: isize = 0;
    let code = f(&mut v);
    if code == class::SUCCESS {
        let v = c_int::try_from(v).map_err(|_| {
            MpiError::arg(format!(
                "{what} {v} does not fit an INTEGER (use the MPI-2 name, with \
                 INTEGER(KIND=MPI_ADDRESS_KIND))"
            ))
        })?;
        set(out, what, v)?;
    }
    Ok(code)
}

macro_rules! int_out_fns {
    ($($f:ident => $c:ident($what:literal);)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $f(datatype: *const c_int, out: *mut c_int, ierr: *mut c_int) {
            let code = shim(stringify!($c), || {
                let t = value(datatype, "datatype")?;
                // SAFETY: `v` is a local MPI_Aint.
                int_out(out, $what, |v| unsafe { $c(t, v) })
            });
            set_ierr(ierr, code);
        }
    )*};
}

int_out_fns! {
    mpi_type_extent_ => MPI_Type_extent("extent");
    mpi_type_lb_ => MPI_Type_lb("displacement");
    mpi_type_ub_ => MPI_Type_ub("displacement");
}

#[no_mangle]
pub unsafe extern "C" fn mpi_address_(
    location: *const c_void,
    address: *mut c_int,
    ierr: *mut c_int,
) {
    let code = shim("MPI_Address", || {
        let p = buffer(location);
        // SAFETY: `v` is a local MPI_Aint; `p` is only turned into a number.
        int_out(address, "address", |v| unsafe { MPI_Get_address(p, v) })
    });
    set_ierr(ierr, code);
}

/// `n` INTEGER displacements as MPI_Aints.
fn aints(p: *const c_int, n: c_int, what: &str) -> Result<Vec<isize>> {
    // SAFETY: an INTEGER array of `n` elements (the count argument of the call).
    let d = unsafe { raw::array(p, cnt(n)?, what) }?;
    Ok(d.iter().map(|&x| x as isize).collect())
}

#[no_mangle]
pub unsafe extern "C" fn mpi_type_hvector_(
    count: *const c_int,
    blocklength: *const c_int,
    stride: *const c_int,
    oldtype: *const c_int,
    newtype: *mut c_int,
    ierr: *mut c_int,
) {
    let code = shim("MPI_Type_hvector", || {
        let (n, b) = (value(count, "count")?, value(blocklength, "blocklength")?);
        let s = value(stride, "stride")? as isize;
        // SAFETY: `newtype` is the caller's INTEGER.
        Ok(unsafe { MPI_Type_create_hvector(n, b, s, value(oldtype, "oldtype")?, newtype) })
    });
    set_ierr(ierr, code);
}

#[no_mangle]
pub unsafe extern "C" fn mpi_type_hindexed_(
    count: *const c_int,
    blocklengths: *const c_int,
    displs: *const c_int,
    oldtype: *const c_int,
    newtype: *mut c_int,
    ierr: *mut c_int,
) {
    let code = shim("MPI_Type_hindexed", || {
        let n = value(count, "count")?;
        let d = aints(displs, n, "array_of_displacements")?;
        let old = value(oldtype, "oldtype")?;
        // SAFETY: `count` block lengths (the caller's), `d` ours, `newtype` the caller's.
        Ok(unsafe { MPI_Type_create_hindexed(n, blocklengths, d.as_ptr(), old, newtype) })
    });
    set_ierr(ierr, code);
}

#[no_mangle]
pub unsafe extern "C" fn mpi_type_struct_(
    count: *const c_int,
    blocklengths: *const c_int,
    displs: *const c_int,
    types: *const c_int,
    newtype: *mut c_int,
    ierr: *mut c_int,
) {
    let code = shim("MPI_Type_struct", || {
        let n = value(count, "count")?;
        let d = aints(displs, n, "array_of_displacements")?;
        // SAFETY: `count` block lengths and types (the caller's), `d` ours.
        Ok(unsafe { MPI_Type_create_struct(n, blocklengths, d.as_ptr(), types, newtype) })
    });
    set_ierr(ierr, code);
}

// ---- Attributes: values, not pointers ----

/// The value of attribute `keyval` on `comm`, if set.
fn attr(comm: c_int, keyval: c_int) -> Result<Option<i64>> {
    if keyval & !0x00ff_ffff == TAG_KEYVAL {
        return Ok(comm::user_attr(comm, keyval)?.map(|v| v as i64));
    }
    Ok(comm::attr_value(comm, keyval)?.map(i64::from))
}

/// MPI_COMM_GET_ATTR and MPI_ATTR_GET: the attribute value in `T` (an
/// INTEGER(KIND=MPI_ADDRESS_KIND), or MPI-1's INTEGER) and the LOGICAL flag.
fn get_attr<T>(
    (name, keyval_name): (&'static str, &str),
    comm: *const c_int,
    keyval: *const c_int,
    val: *mut T,
    flag: *mut c_int,
    of: impl FnOnce(i64) -> T,
) -> c_int {
    shim(name, || {
        let c = value(comm, "comm")?;
        let k = value(keyval, keyval_name)?;
        Ok(guard(name, c, || match attr(c, k)? {
            Some(v) => {
                set(val, "attribute_val", of(v))?;
                set(flag, "flag", 1)
            }
            None => set(flag, "flag", 0),
        }))
    })
}

#[no_mangle]
pub unsafe extern "C" fn mpi_comm_get_attr_(
    comm: *const c_int,
    keyval: *const c_int,
    val: *mut i64,
    flag: *mut c_int,
    ierr: *mut c_int,
) {
    let names = ("MPI_Comm_get_attr", "comm_keyval");
    set_ierr(ierr, get_attr(names, comm, keyval, val, flag, |v| v));
}

#[no_mangle]
pub unsafe extern "C" fn mpi_attr_get_(
    comm: *const c_int,
    keyval: *const c_int,
    val: *mut c_int,
    flag: *mut c_int,
    ierr: *mut c_int,
) {
    let names = ("MPI_Attr_get", "keyval");
    set_ierr(
        ierr,
        get_attr(names, comm, keyval, val, flag, |v| v as c_int),
    );
}

/// MPI_COMM_SET_ATTR and MPI_ATTR_PUT: the attribute value as an
/// INTEGER(KIND=MPI_ADDRESS_KIND) or MPI-1's INTEGER.
fn set_attr<T: Copy + Into<i64>>(
    name: &'static str,
    comm: *const c_int,
    keyval: *const c_int,
    val: *const T,
) -> c_int {
    shim(name, || {
        let (c, k, v) = (
            value(comm, "comm")?,
            value(keyval, "keyval")?,
            value(val, "val")?,
        );
        Ok(guard(name, c, || comm::set_attr(c, k, v.into() as usize)))
    })
}

#[no_mangle]
pub unsafe extern "C" fn mpi_comm_set_attr_(
    comm: *const c_int,
    keyval: *const c_int,
    val: *const i64,
    ierr: *mut c_int,
) {
    set_ierr(ierr, set_attr("MPI_Comm_set_attr", comm, keyval, val));
}

#[no_mangle]
pub unsafe extern "C" fn mpi_attr_put_(
    comm: *const c_int,
    keyval: *const c_int,
    val: *const c_int,
    ierr: *mut c_int,
) {
    set_ierr(ierr, set_attr("MPI_Attr_put", comm, keyval, val));
}

// ---- The program's own procedures ----

/// MPI_GREQUEST_START(QUERY_FN, FREE_FN, CANCEL_FN, EXTRA_STATE, REQUEST, IERROR): the
/// three procedures are Fortran subroutines taking every argument by reference, with an
/// IERROR of their own last, and EXTRA_STATE is an INTEGER(KIND=MPI_ADDRESS_KIND)
/// (MPI-3.1 section 12.2), so they are called as Fortran's, not as C's.
#[no_mangle]
pub unsafe extern "C" fn mpi_grequest_start_(
    query_fn: Option<raw::FortranGreqQueryFn>,
    free_fn: Option<raw::FortranGreqFreeFn>,
    cancel_fn: Option<raw::FortranGreqCancelFn>,
    extra_state: *const isize,
    request: *mut c_int,
    ierr: *mut c_int,
) {
    let code = shim("MPI_Grequest_start", || {
        let extra = value(extra_state, "extra_state")?;
        let fns = raw::GreqFns::Fortran {
            query: query_fn,
            free: free_fn,
            cancel: cancel_fn,
        };
        Ok(guard("MPI_Grequest_start", COMM_WORLD, || {
            let h = request::start_generalized(fns, extra as usize)?;
            set(request, "request", h)
        }))
    });
    set_ierr(ierr, code);
}

/// MPI_ALLOC_MEM(SIZE, INFO, BASEPTR, IERROR): SIZE and BASEPTR are
/// INTEGER(KIND=MPI_ADDRESS_KIND); BASEPTR gets the address (for a Cray pointer or
/// C_F_POINTER), MPI-3.1 section 8.2.
#[no_mangle]
pub unsafe extern "C" fn mpi_alloc_mem_(
    size: *const isize,
    info: *const c_int,
    baseptr: *mut isize,
    ierr: *mut c_int,
) {
    let code = shim("MPI_Alloc_mem", || {
        let (n, i) = (value(size, "size")?, value(info, "info")?);
        // SAFETY: `baseptr` is the caller's address-sized INTEGER, where the C function
        // writes a pointer (the same size).
        Ok(unsafe { MPI_Alloc_mem(n, i, baseptr as *mut c_void) })
    });
    set_ierr(ierr, code);
}

/// MPI_FREE_MEM(BASE, IERROR): BASE is the memory itself (a choice argument).
#[no_mangle]
pub unsafe extern "C" fn mpi_free_mem_(base: *mut c_void, ierr: *mut c_int) {
    // SAFETY: the program passes memory MPI_ALLOC_MEM gave it.
    set_ierr(ierr, unsafe { MPI_Free_mem(base) });
}

/// MPI_COMM_CREATE_KEYVAL(COMM_COPY_ATTR_FN, COMM_DELETE_ATTR_FN, COMM_KEYVAL,
/// EXTRA_STATE, IERROR): Fortran procedures (MPI-3.1 section 6.7.2), called with every
/// argument by reference; EXTRA_STATE is INTEGER(KIND=MPI_ADDRESS_KIND), passed back by
/// value. MPI_COMM_NULL_COPY_FN and friends are procedures of this library.
#[no_mangle]
pub unsafe extern "C" fn mpi_comm_create_keyval_(
    copy: Option<raw::FortranCopyFn>,
    delete: Option<raw::FortranDeleteFn>,
    keyval: *mut c_int,
    extra_state: *const isize,
    ierr: *mut c_int,
) {
    let code = shim("MPI_Comm_create_keyval", || {
        let extra = value(extra_state, "extra_state")? as usize;
        Ok(guard("MPI_Comm_create_keyval", COMM_WORLD, || {
            let k = comm::create_keyval(crate::state::Keyval {
                copy: copy.map(raw::AttrCopy::Fortran),
                delete: delete.map(raw::AttrDelete::Fortran),
                extra,
            })?;
            set(keyval, "comm_keyval", k)
        }))
    });
    set_ierr(ierr, code);
}

/// MPI_WIN_CREATE_KEYVAL: window keys share the one key table.
#[no_mangle]
pub unsafe extern "C" fn mpi_win_create_keyval_(
    copy: Option<raw::FortranCopyFn>,
    delete: Option<raw::FortranDeleteFn>,
    keyval: *mut c_int,
    extra_state: *const isize,
    ierr: *mut c_int,
) {
    // SAFETY: the same arguments, under the same contract.
    unsafe { mpi_comm_create_keyval_(copy, delete, keyval, extra_state, ierr) }
}

/// MPI_WIN_GET_ATTR: the value itself (INTEGER(KIND=MPI_ADDRESS_KIND)), the predefined
/// attributes' included (MPI_WIN_BASE: the address).
#[no_mangle]
pub unsafe extern "C" fn mpi_win_get_attr_(
    win: *const c_int,
    keyval: *const c_int,
    val: *mut i64,
    flag: *mut c_int,
    ierr: *mut c_int,
) {
    use crate::rma::object;
    let code = shim("MPI_Win_get_attr", || {
        let (w, k) = (value(win, "win")?, value(keyval, "win_keyval")?);
        Ok(object::guard("MPI_Win_get_attr", w, || {
            let v = match object::fixed_attr(w, k)? {
                Some((_, v)) => Some(v as i64),
                None => object::user_attr(w, k)?.map(|v| v as i64),
            };
            match v {
                Some(v) => {
                    set(val, "attribute_val", v)?;
                    set(flag, "flag", 1)
                }
                None => set(flag, "flag", 0),
            }
        }))
    });
    set_ierr(ierr, code);
}

/// MPI_WIN_SET_ATTR: the value itself (INTEGER(KIND=MPI_ADDRESS_KIND)).
#[no_mangle]
pub unsafe extern "C" fn mpi_win_set_attr_(
    win: *const c_int,
    keyval: *const c_int,
    val: *const i64,
    ierr: *mut c_int,
) {
    use crate::rma::object;
    let code = shim("MPI_Win_set_attr", || {
        let (w, k, v) = (
            value(win, "win")?,
            value(keyval, "win_keyval")?,
            value(val, "val")?,
        );
        Ok(object::guard("MPI_Win_set_attr", w, || {
            object::set_attr(w, k, v as usize)
        }))
    });
    set_ierr(ierr, code);
}

/// MPI_KEYVAL_CREATE (MPI-1, deprecated): as MPI_COMM_CREATE_KEYVAL with INTEGER
/// EXTRA_STATE and attribute values.
#[no_mangle]
pub unsafe extern "C" fn mpi_keyval_create_(
    copy: Option<raw::Fortran1CopyFn>,
    delete: Option<raw::Fortran1DeleteFn>,
    keyval: *mut c_int,
    extra_state: *const c_int,
    ierr: *mut c_int,
) {
    let code = shim("MPI_Keyval_create", || {
        let extra = value(extra_state, "extra_state")? as usize;
        Ok(guard("MPI_Keyval_create", COMM_WORLD, || {
            let k = comm::create_keyval(crate::state::Keyval {
                copy: copy.map(raw::AttrCopy::Fortran1),
                delete: delete.map(raw::AttrDelete::Fortran1),
                extra,
            })?;
            set(keyval, "keyval", k)
        }))
    });
    set_ierr(ierr, code);
}

/// Sets a Fortran LOGICAL and INTEGER, for the predefined attribute procedures.
fn logical(flag: *mut c_int, v: bool, ierr: *mut c_int) {
    let _ = set(flag, "flag", c_int::from(v));
    set_ierr(ierr, class::SUCCESS);
}

/// MPI_COMM_NULL_COPY_FN (and MPI_NULL_COPY_FN): does not copy (FLAG = .FALSE.).
#[no_mangle]
pub extern "C" fn mpi_comm_null_copy_fn_(
    _old: *const c_int,
    _key: *const c_int,
    _extra: *const isize,
    _val_in: *const isize,
    _val_out: *mut isize,
    flag: *mut c_int,
    ierr: *mut c_int,
) {
    logical(flag, false, ierr);
}

/// MPI_COMM_DUP_FN: copies the value (ATTRIBUTE_VAL_OUT = ATTRIBUTE_VAL_IN, FLAG =
/// .TRUE.).
#[no_mangle]
pub extern "C" fn mpi_comm_dup_fn_(
    _old: *const c_int,
    _key: *const c_int,
    _extra: *const isize,
    val_in: *const isize,
    val_out: *mut isize,
    flag: *mut c_int,
    ierr: *mut c_int,
) {
    match value(val_in, "attribute_val_in").and_then(|v| set(val_out, "attribute_val_out", v)) {
        Ok(()) => logical(flag, true, ierr),
        Err(e) => set_ierr(ierr, e.class),
    }
}

/// MPI_COMM_NULL_DELETE_FN (and MPI_NULL_DELETE_FN): does nothing.
#[no_mangle]
pub extern "C" fn mpi_comm_null_delete_fn_(
    _comm: *const c_int,
    _key: *const c_int,
    _val: *const isize,
    _extra: *const isize,
    ierr: *mut c_int,
) {
    set_ierr(ierr, class::SUCCESS);
}

/// MPI_NULL_COPY_FN (MPI-1, INTEGER values): does not copy.
#[no_mangle]
pub extern "C" fn mpi_null_copy_fn_(
    _old: *const c_int,
    _key: *const c_int,
    _extra: *const c_int,
    _val_in: *const c_int,
    _val_out: *mut c_int,
    flag: *mut c_int,
    ierr: *mut c_int,
) {
    logical(flag, false, ierr);
}

/// MPI_DUP_FN (MPI-1, INTEGER values): copies the value.
#[no_mangle]
pub extern "C" fn mpi_dup_fn_(
    _old: *const c_int,
    _key: *const c_int,
    _extra: *const c_int,
    val_in: *const c_int,
    val_out: *mut c_int,
    flag: *mut c_int,
    ierr: *mut c_int,
) {
    match value(val_in, "attribute_val_in").and_then(|v| set(val_out, "attribute_val_out", v)) {
        Ok(()) => logical(flag, true, ierr),
        Err(e) => set_ierr(ierr, e.class),
    }
}

/// MPI_NULL_DELETE_FN (MPI-1, INTEGER values): does nothing.
#[no_mangle]
pub extern "C" fn mpi_null_delete_fn_(
    _comm: *const c_int,
    _key: *const c_int,
    _val: *const c_int,
    _extra: *const c_int,
    ierr: *mut c_int,
) {
    set_ierr(ierr, class::SUCCESS);
}

/// MPI_INFO_GET_NTHKEY(INFO, N, KEY, IERROR): N counts from 0, as in C (MPI-3.1
/// section 9); KEY is blank-padded.
#[no_mangle]
pub unsafe extern "C" fn mpi_info_get_nthkey_(
    info: *const c_int,
    n: *const c_int,
    key: *mut c_char,
    ierr: *mut c_int,
    key_len: usize,
) {
    let code = shim("MPI_Info_get_nthkey", || {
        let (i, n) = (value(info, "info")?, value(n, "n")?);
        Ok(guard("MPI_Info_get_nthkey", COMM_WORLD, || {
            let k = crate::info::nthkey(i, n)?;
            // SAFETY: the CHARACTER argument of `key_len` bytes (its hidden length).
            unsafe { raw::put_fortran_string(key, key_len, &k) }.map(drop)
        }))
    });
    set_ierr(ierr, code);
}

#[no_mangle]
pub unsafe extern "C" fn mpi_info_get_valuelen_(
    info: *const c_int,
    key: *const c_char,
    valuelen: *mut c_int,
    flag: *mut c_int,
    ierr: *mut c_int,
    key_len: usize,
) {
    let code = shim("MPI_Info_get_valuelen", || {
        let i = value(info, "info")?;
        let k = c_string(key, key_len, "key")?;
        // SAFETY: a NUL-terminated key we own; the caller's INTEGER and LOGICAL.
        Ok(unsafe { MPI_Info_get_valuelen(i, k.as_ptr(), valuelen, flag) })
    });
    set_ierr(ierr, code);
}

// ---- MPIX_ fault-tolerance extensions ----

#[no_mangle]
pub unsafe extern "C" fn mpix_checkpoint_(
    state: *const c_void,
    bytes: *const c_int,
    comm: *const c_int,
    ierr: *mut c_int,
) {
    let code = shim("MPIX_Checkpoint", || {
        let (n, c) = (value(bytes, "bytes")?, value(comm, "comm")?);
        // SAFETY: `bytes` bytes of the caller's state.
        Ok(unsafe { MPIX_Checkpoint(state, n, c) })
    });
    set_ierr(ierr, code);
}

#[no_mangle]
pub unsafe extern "C" fn mpix_restored_(
    state: *mut c_void,
    max_bytes: *const c_int,
    bytes: *mut c_int,
    flag: *mut c_int,
    ierr: *mut c_int,
) {
    let code = shim("MPIX_Restored", || {
        let n = value(max_bytes, "max_bytes")?;
        // SAFETY: `max_bytes` writable bytes of the caller's, its INTEGER and LOGICAL.
        Ok(unsafe { MPIX_Restored(state, n, bytes, flag) })
    });
    set_ierr(ierr, code);
}

/// MPIX_SEED(COMM, SALT, SEED, IERROR) with INTEGER(KIND=8) SALT and SEED.
#[no_mangle]
pub unsafe extern "C" fn mpix_seed_(
    comm: *const c_int,
    salt: *const i64,
    seed: *mut i64,
    ierr: *mut c_int,
) {
    let code = shim("MPIX_Seed", || {
        let (c, s) = (value(comm, "comm")?, value(salt, "salt")?);
        // SAFETY: `seed` is the caller's INTEGER(KIND=8), which has the size of a u64.
        Ok(unsafe { MPIX_Seed(c, s as u64, seed as *mut u64) })
    });
    set_ierr(ierr, code);
}

/// MPIX_OUTPUT_OPEN(PATH, TMPPATH, IERROR) with CHARACTER*(*) PATH, TMPPATH: TMPPATH
/// gets the path to OPEN (blank-padded); one that does not fit is MPI_ERR_ARG.
#[no_mangle]
pub unsafe extern "C" fn mpix_output_open_(
    path: *const c_char,
    tmp_path: *mut c_char,
    ierr: *mut c_int,
    path_len: usize,
    tmp_path_len: usize,
) {
    let code = shim("MPIX_Output_open", || {
        let p = c_string(path, path_len, "path")?;
        let mut buf = vec![0 as c_char; MAX_OUTPUT_PATH + 1];
        // SAFETY: a NUL-terminated string we own and a buffer of MAX_OUTPUT_PATH + 1.
        let code = unsafe { MPIX_Output_open(p.as_ptr(), buf.as_mut_ptr(), buf.len() as c_int) };
        if code != class::SUCCESS {
            return Ok(code);
        }
        let bytes: Vec<u8> = buf
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        let w = String::from_utf8_lossy(&bytes).into_owned();
        if w.len() > tmp_path_len {
            crate::ft::output_discard(&p.to_string_lossy());
            return Err(MpiError::arg(format!(
                "MPIX_OUTPUT_OPEN: the path to write ({} characters) does not fit in TMPPATH ({tmp_path_len})",
                w.len()
            )));
        }
        // SAFETY: the CHARACTER argument of `tmp_path_len` bytes (its hidden length).
        unsafe { raw::put_fortran_string(tmp_path, tmp_path_len, &w) }?;
        Ok(class::SUCCESS)
    });
    set_ierr(ierr, code);
}

/// MPIX_OUTPUT_COMMIT(PATH, IERROR) with CHARACTER*(*) PATH; gfortran's units are
/// flushed first, but CLOSE the unit first all the same.
#[no_mangle]
pub unsafe extern "C" fn mpix_output_commit_(
    path: *const c_char,
    ierr: *mut c_int,
    path_len: usize,
) {
    let code = shim("MPIX_Output_commit", || {
        let p = c_string(path, path_len, "path")?;
        // SAFETY: a NUL-terminated string we own.
        Ok(unsafe { MPIX_Output_commit(p.as_ptr()) })
    });
    set_ierr(ierr, code);
}

// ---- Datatypes: names, attributes, external32 ----

/// MPI_TYPE_CREATE_KEYVAL(TYPE_COPY_ATTR_FN, TYPE_DELETE_ATTR_FN, TYPE_KEYVAL,
/// EXTRA_STATE, IERROR): the two procedures take every argument by reference (MPI-3.1
/// section 6.7.4); EXTRA_STATE is an INTEGER(KIND=MPI_ADDRESS_KIND) value.
#[no_mangle]
pub unsafe extern "C" fn mpi_type_create_keyval_(
    copy_fn: Option<raw::FortranCopyAttrFn>,
    delete_fn: Option<raw::FortranDeleteAttrFn>,
    keyval: *mut c_int,
    extra_state: *const isize,
    ierr: *mut c_int,
) {
    use crate::state::{CopyFn, DeleteFn};
    let code = shim("MPI_Type_create_keyval", || {
        let extra = value(extra_state, "extra_state")?;
        Ok(guard("MPI_Type_create_keyval", COMM_WORLD, || {
            let k = crate::typeattr::create_keyval(
                copy_fn.map(CopyFn::Fortran),
                delete_fn.map(DeleteFn::Fortran),
                extra as usize,
            )?;
            set(keyval, "type_keyval", k)
        }))
    });
    set_ierr(ierr, code);
}

/// MPI_TYPE_SET_ATTR(DATATYPE, TYPE_KEYVAL, ATTRIBUTE_VAL, IERROR): the value, an
/// INTEGER(KIND=MPI_ADDRESS_KIND), is stored as C stores its `void *`.
#[no_mangle]
pub unsafe extern "C" fn mpi_type_set_attr_(
    datatype: *const c_int,
    keyval: *const c_int,
    val: *const isize,
    ierr: *mut c_int,
) {
    let code = shim("MPI_Type_set_attr", || {
        let (t, k, v) = (
            value(datatype, "datatype")?,
            value(keyval, "type_keyval")?,
            value(val, "attribute_val")?,
        );
        Ok(guard("MPI_Type_set_attr", COMM_WORLD, || {
            crate::typeattr::set_attr(t, k, v as usize)
        }))
    });
    set_ierr(ierr, code);
}

#[no_mangle]
pub unsafe extern "C" fn mpi_type_get_attr_(
    datatype: *const c_int,
    keyval: *const c_int,
    val: *mut isize,
    flag: *mut c_int,
    ierr: *mut c_int,
) {
    let code = shim("MPI_Type_get_attr", || {
        let (t, k) = (value(datatype, "datatype")?, value(keyval, "type_keyval")?);
        Ok(guard(
            "MPI_Type_get_attr",
            COMM_WORLD,
            || match crate::typeattr::get_attr(t, k)? {
                Some(v) => {
                    set(val, "attribute_val", v as isize)?;
                    set(flag, "flag", 1)
                }
                None => set(flag, "flag", 0),
            },
        ))
    });
    set_ierr(ierr, code);
}

/// MPI_TYPE_NULL_COPY_FN for Fortran programs: nothing is copied.
#[no_mangle]
pub unsafe extern "C" fn mpi_type_null_copy_fn_(
    _old: *const c_int,
    _key: *const c_int,
    _extra: *const isize,
    _in: *const isize,
    _out: *mut isize,
    flag: *mut c_int,
    ierr: *mut c_int,
) {
    if let Err(e) = set(flag, "flag", 0) {
        errhandler::raise("MPI_TYPE_NULL_COPY_FN", COMM_WORLD, e);
    }
    set_ierr(ierr, class::SUCCESS);
}

/// MPI_TYPE_DUP_FN for Fortran programs: the value is copied.
#[no_mangle]
pub unsafe extern "C" fn mpi_type_dup_fn_(
    _old: *const c_int,
    _key: *const c_int,
    _extra: *const isize,
    val_in: *const isize,
    val_out: *mut isize,
    flag: *mut c_int,
    ierr: *mut c_int,
) {
    let code = shim("MPI_TYPE_DUP_FN", || {
        set(
            val_out,
            "attribute_val_out",
            value(val_in, "attribute_val_in")?,
        )?;
        set(flag, "flag", 1)?;
        Ok(class::SUCCESS)
    });
    set_ierr(ierr, code);
}

/// MPI_TYPE_NULL_DELETE_FN for Fortran programs: nothing to do.
#[no_mangle]
pub unsafe extern "C" fn mpi_type_null_delete_fn_(
    _datatype: *const c_int,
    _key: *const c_int,
    _val: *const isize,
    _extra: *const isize,
    ierr: *mut c_int,
) {
    set_ierr(ierr, class::SUCCESS);
}

#[no_mangle]
pub unsafe extern "C" fn mpi_pack_external_size_(
    datarep: *const c_char,
    incount: *const c_int,
    datatype: *const c_int,
    size: *mut isize,
    ierr: *mut c_int,
    datarep_len: usize,
) {
    let code = shim("MPI_Pack_external_size", || {
        let d = c_string(datarep, datarep_len, "datarep")?;
        let (n, t) = (value(incount, "incount")?, value(datatype, "datatype")?);
        // SAFETY: a NUL-terminated string we own; `size` is the caller's.
        Ok(unsafe { MPI_Pack_external_size(d.as_ptr(), n, t, size) })
    });
    set_ierr(ierr, code);
}

#[no_mangle]
pub unsafe extern "C" fn mpi_pack_external_(
    datarep: *const c_char,
    inbuf: *const c_void,
    incount: *const c_int,
    datatype: *const c_int,
    outbuf: *mut c_void,
    outsize: *const isize,
    position: *mut isize,
    ierr: *mut c_int,
    datarep_len: usize,
) {
    let code = shim("MPI_Pack_external", || {
        let d = c_string(datarep, datarep_len, "datarep")?;
        let (n, t, o) = (
            value(incount, "incount")?,
            value(datatype, "datatype")?,
            value(outsize, "outsize")?,
        );
        let (i, out) = (
            buffer(inbuf),
            buffer(outbuf as *const c_void) as *mut c_void,
        );
        // SAFETY: the caller's buffers and position, under MPI_Pack_external's contract.
        Ok(unsafe { MPI_Pack_external(d.as_ptr(), i, n, t, out, o, position) })
    });
    set_ierr(ierr, code);
}

#[no_mangle]
pub unsafe extern "C" fn mpi_unpack_external_(
    datarep: *const c_char,
    inbuf: *const c_void,
    insize: *const isize,
    position: *mut isize,
    outbuf: *mut c_void,
    outcount: *const c_int,
    datatype: *const c_int,
    ierr: *mut c_int,
    datarep_len: usize,
) {
    let code = shim("MPI_Unpack_external", || {
        let d = c_string(datarep, datarep_len, "datarep")?;
        let (s, n, t) = (
            value(insize, "insize")?,
            value(outcount, "outcount")?,
            value(datatype, "datatype")?,
        );
        let (i, out) = (
            buffer(inbuf),
            buffer(outbuf as *const c_void) as *mut c_void,
        );
        // SAFETY: the caller's buffers and position, under MPI_Unpack_external's contract.
        Ok(unsafe { MPI_Unpack_external(d.as_ptr(), i, s, position, out, n, t) })
    });
    set_ierr(ierr, code);
}

// ---- Not implemented: the routine exists and answers MPI_ERR_OTHER ----

/// `mpi_x_ => "MPI_X"(n)`: a routine of `n` arguments before `ierror`.
macro_rules! fortran_stubs {
    ($($f:ident => $name:literal($($a:ident),*);)*) => {$(
        #[no_mangle]
        pub extern "C" fn $f($($a: *mut c_void,)* ierr: *mut c_int) {
            $(let _ = $a;)*
            set_ierr(ierr, errhandler::not_implemented($name));
        }
    )*};
}

fortran_stubs! {
    mpi_close_port_ => "MPI_Close_port"(a);
    mpi_comm_accept_ => "MPI_Comm_accept"(a, b, c, d, e);
    mpi_comm_connect_ => "MPI_Comm_connect"(a, b, c, d, e);
    mpi_comm_spawn_ => "MPI_Comm_spawn"(a, b, c, d, e, f, g, h);
    mpi_comm_spawn_multiple_ => "MPI_Comm_spawn_multiple"(a, b, c, d, e, f, g, h, i);
    mpi_lookup_name_ => "MPI_Lookup_name"(a, b, c);
    mpi_open_port_ => "MPI_Open_port"(a, b);
    mpi_publish_name_ => "MPI_Publish_name"(a, b, c);
    mpi_register_datarep_ => "MPI_Register_datarep"(a, b, c, d, e);
    mpi_unpublish_name_ => "MPI_Unpublish_name"(a, b, c);
}

// ---- Address arithmetic (MPI-3.1 section 4.1.12): functions, not subroutines ----

/// MPI_AINT_ADD(BASE, DISP): INTEGER(KIND=MPI_ADDRESS_KIND) function.
#[no_mangle]
pub unsafe extern "C" fn mpi_aint_add_(base: *const isize, disp: *const isize) -> isize {
    match (value(base, "base"), value(disp, "disp")) {
        (Ok(b), Ok(d)) => MPI_Aint_add(b, d),
        (Err(e), _) | (_, Err(e)) => {
            errhandler::raise("MPI_AINT_ADD", COMM_WORLD, e);
            0
        }
    }
}

/// MPI_AINT_DIFF(ADDR1, ADDR2): INTEGER(KIND=MPI_ADDRESS_KIND) function.
#[no_mangle]
pub unsafe extern "C" fn mpi_aint_diff_(a: *const isize, b: *const isize) -> isize {
    match (value(a, "addr1"), value(b, "addr2")) {
        (Ok(a), Ok(b)) => MPI_Aint_diff(a, b),
        (Err(e), _) | (_, Err(e)) => {
            errhandler::raise("MPI_AINT_DIFF", COMM_WORLD, e);
            0
        }
    }
}

// ---- Conversions the C side uses on Fortran objects ----

#[no_mangle]
pub unsafe extern "C" fn MPI_Status_f2c(f: *const c_int, c: *mut MpiStatus) -> c_int {
    guard("MPI_Status_f2c", COMM_WORLD, || {
        // SAFETY: MPI_STATUS_SIZE INTEGERs at `f` (MPI-3.1 section 17.2.5).
        let f = unsafe { raw::input(f as *const MpiStatus, "f_status") }?;
        set(c, "c_status", *f)
    })
}

#[no_mangle]
pub unsafe extern "C" fn MPI_Status_c2f(c: *const MpiStatus, f: *mut c_int) -> c_int {
    guard("MPI_Status_c2f", COMM_WORLD, || {
        // SAFETY: a C status at `c` (MPI-3.1 section 17.2.5).
        let c = unsafe { raw::input(c, "c_status") }?;
        set(f as *mut MpiStatus, "f_status", *c)
    })
}

#[no_mangle]
pub extern "C" fn MPI_Message_f2c(message: c_int) -> c_int {
    message
}

#[no_mangle]
pub extern "C" fn MPI_Message_c2f(message: c_int) -> c_int {
    message
}
