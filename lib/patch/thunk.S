/*
 * librecce-patch.so: what `recce patch` puts between a patched function's
 * callers and its replacement, so that the replacement may use every
 * register the calling convention lets a function use, while the callers
 * get back every register the old function left alone (GCC's -fipa-ra
 * lets a caller keep values there, through a tail call or into the next
 * call's arguments). Everything but the result comes back as it was:
 * general registers, vector and x87 state.
 *
 * Entered from the patch's veneer, which pushed the address of its
 * descriptor over nothing else: on entry [rsp] holds the descriptor,
 * [rsp + 8] the caller's return address, the caller's stack arguments
 * follow. The descriptor (src/patch/patch-thunk.h):
 *
 *	+0   the replacement
 *	+8   bytes of stack arguments to copy (a multiple of 8)
 *	+16  which registers carry the result (low 32 bits), and the size
 *	     of the XSAVE area (high 32 bits)
 *	+24  the XSAVE component mask
 *
 * The descriptor is read only in the first 128 bytes (up to
 * recce_patch_thunk_read); recce keeps threads out of them when it
 * removes a descriptor. The frame is
 * an ordinary one (rbp chain, CFI), so exceptions and unwinders pass
 * through it.
 */
#define RET_RAX	    1
#define RET_RDX	    2
#define RET_XMM0    4
#define RET_XMM1    8
#define RET_X87	    16
#define RET_VECWIDE 32

	.text
	.globl	recce_patch_thunk
	.type	recce_patch_thunk, @function
recce_patch_thunk:
	.cfi_startproc
	.cfi_def_cfa_offset 16
	xchg	%rbp, (%rsp)		/* rbp: the descriptor; the caller's rbp in its place */
	.cfi_offset %rbp, -16
	push	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rbx, -24
	mov	%rbp, %rbx
	lea	8(%rsp), %rbp		/* 0(%rbp): the caller's rbp, 8(%rbp): its return address */
	.cfi_def_cfa %rbp, 16
	push	%rax			/* -16 */
	push	%rdx			/* -24 */
	push	%rcx			/* -32 */
	push	%rsi			/* -40 */
	push	%rdi			/* -48 */
	push	%r8			/* -56 */
	push	%r9			/* -64 */
	push	%r10			/* -72 */
	push	%r11			/* -80 */
	push	0(%rbx)			/* -88: the replacement */
	push	8(%rbx)			/* -96: stack argument bytes */
	push	16(%rbx)		/* -104: result registers, XSAVE size */
	push	24(%rbx)		/* -112: XSAVE mask */
recce_patch_thunk_read:
	.if recce_patch_thunk_read - recce_patch_thunk > 128	/* PATCH_THUNK_READ_MAX */
	.error "the part reading the descriptor outgrew PATCH_THUNK_READ_MAX"
	.endif
	sub	$32, %rsp		/* -144: xmm0, xmm1 after the call */
	/* The vector and x87 state, in a 64-byte aligned XSAVE area whose
	 * header starts zeroed. */
	mov	-100(%rbp), %ecx
	sub	%rcx, %rsp
	and	$-64, %rsp
	xor	%eax, %eax
	mov	%rax, 512(%rsp)
	mov	%rax, 520(%rsp)
	mov	%rax, 528(%rsp)
	mov	%rax, 536(%rsp)
	mov	%rax, 544(%rsp)
	mov	%rax, 552(%rsp)
	mov	%rax, 560(%rsp)
	mov	%rax, 568(%rsp)
	mov	-112(%rbp), %eax
	mov	-108(%rbp), %edx
	xsave64	(%rsp)
	/* The caller's stack arguments, where the replacement looks. */
	mov	-96(%rbp), %rcx
	sub	%rcx, %rsp
	and	$-16, %rsp
	lea	16(%rbp), %rsi
	mov	%rsp, %rdi
	rep movsb
	mov	-16(%rbp), %rax
	mov	-24(%rbp), %rdx
	mov	-32(%rbp), %rcx
	mov	-40(%rbp), %rsi
	mov	-48(%rbp), %rdi
	mov	-56(%rbp), %r8
	mov	-64(%rbp), %r9
	mov	-72(%rbp), %r10
	call	*-88(%rbp)
	/* The result goes where the registers come back from. */
	mov	-104(%rbp), %ecx
	test	$RET_RAX, %cl
	jz	1f
	mov	%rax, -16(%rbp)
1:	test	$RET_RDX, %cl
	jz	2f
	mov	%rdx, -24(%rbp)
2:	movdqu	%xmm0, -144(%rbp)
	movdqu	%xmm1, -128(%rbp)
	/* The state saved before, but for what carries the result. */
	mov	-100(%rbp), %esi
	lea	-144(%rbp), %rdi
	sub	%rsi, %rdi
	and	$-64, %rdi
	mov	-112(%rbp), %eax
	mov	-108(%rbp), %edx
	test	$RET_X87, %cl
	jz	3f
	and	$~1, %eax
3:	test	$RET_VECWIDE, %cl
	jz	4f
	and	$~0xe4, %eax		/* AVX and AVX-512 state */
4:	xrstor64 (%rdi)
	test	$RET_XMM0, %cl
	jz	5f
	movdqu	-144(%rbp), %xmm0
5:	test	$RET_XMM1, %cl
	jz	6f
	movdqu	-128(%rbp), %xmm1
6:	lea	-80(%rbp), %rsp
	pop	%r11
	pop	%r10
	pop	%r9
	pop	%r8
	pop	%rdi
	pop	%rsi
	pop	%rcx
	pop	%rdx
	pop	%rax
	pop	%rbx
	.cfi_restore %rbx
	pop	%rbp
	.cfi_def_cfa %rsp, 8
	.cfi_restore %rbp
	ret
	.cfi_endproc
	.size	recce_patch_thunk, .-recce_patch_thunk

	.section .note.GNU-stack, "", @progbits
