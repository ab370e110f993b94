/*
 * librecce-patch.so: what `recce patch` puts between a patched function's
 * callers and its replacement, so that the replacement may use every
 * register the calling convention lets a function use, while the callers
 * get back every register the old function left alone (GCC's -fipa-ra
 * lets a caller keep values there, through a tail call or into the next
 * call's arguments). Everything but the result comes back as it was:
 * general registers and vector registers, as wide as the machine has
 * them (xmm, ymm, or zmm0-31), saved with plain moves: XSAVE costs
 * hundreds of nanoseconds a call on some virtual machines. The x87
 * stack is empty at every call (the ABI), and the control words are the
 * replacement's to keep, as for any function.
 *
 * Entered from the patch's veneer, which pushed the address of its
 * descriptor over nothing else: on entry [rsp] holds the descriptor,
 * [rsp + 8] the caller's return address, the caller's stack arguments
 * follow. The descriptor (src/patch/patch-thunk.h):
 *
 *	+0   the replacement
 *	+8   bytes of stack arguments to copy (a multiple of 8)
 *	+16  which registers carry the result
 *	+24  the vector registers to keep: 0 xmm0-15, 1 ymm0-15, 2 zmm0-31
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

#define VEC_AREA    2048	/* 32 zmm registers */

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
	push	16(%rbx)		/* -104: result registers */
	push	24(%rbx)		/* -112: vector width */
recce_patch_thunk_read:
	.if recce_patch_thunk_read - recce_patch_thunk > 128	/* PATCH_THUNK_READ_MAX */
	.error "the part reading the descriptor outgrew PATCH_THUNK_READ_MAX"
	.endif
	/* The vector registers, in a 64-byte aligned area below, its
	 * address at -120. */
	sub	$(128 + VEC_AREA), %rsp
	and	$-64, %rsp
	mov	%rsp, -120(%rbp)
	cmpq	$1, -112(%rbp)
	jb	10f
	je	11f
	.irp	n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	vmovdqu64 %zmm\n, 64*\n(%rsp)
	.endr
	jmp	12f
11:	.irp	n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
	vmovdqu	%ymm\n, 32*\n(%rsp)
	.endr
	jmp	12f
10:	.irp	n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
	movdqu	%xmm\n, 16*\n(%rsp)
	.endr
12:	/* The caller's stack arguments, where the replacement looks. */
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
2:	mov	-120(%rbp), %rsi	/* the vector area */
	cmpq	$1, -112(%rbp)
	jb	20f
	je	21f
	/* A result goes into its register's slot first, so that it is
	 * what comes back. */
	test	$RET_XMM0, %cl
	jz	3f
	vmovdqu64 %zmm0, 0(%rsi)
3:	test	$RET_XMM1, %cl
	jz	4f
	vmovdqu64 %zmm1, 64(%rsi)
4:	.irp	n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
	vmovdqu64 64*\n(%rsi), %zmm\n
	.endr
	jmp	22f
21:	test	$RET_XMM0, %cl
	jz	5f
	vmovdqu	%ymm0, 0(%rsi)
5:	test	$RET_XMM1, %cl
	jz	6f
	vmovdqu	%ymm1, 32(%rsi)
6:	.irp	n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
	vmovdqu	32*\n(%rsi), %ymm\n
	.endr
	jmp	22f
20:	test	$RET_XMM0, %cl
	jz	7f
	movdqu	%xmm0, 0(%rsi)
7:	test	$RET_XMM1, %cl
	jz	8f
	movdqu	%xmm1, 16(%rsi)
8:	.irp	n,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15
	movdqu	16*\n(%rsi), %xmm\n
	.endr
22:	lea	-80(%rbp), %rsp
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
