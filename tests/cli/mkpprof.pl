#!/usr/bin/perl
# Writes hand-made pprof profiles (gzip) for recce's black-box tests of
# `recce report`: a valid profile shaped like the ones Go writes, and corrupt
# ones whose references point nowhere. It encodes profile.proto by its
# documented field numbers, independently of recce's own encoder.
#
#   perl tests/cli/mkpprof.pl KIND > FILE
#
# KIND: go, deep, bad-location, bad-function, bad-string, bad-values,
# bad-mapping, evil-names (a function and a file whose names hold terminal
# control sequences), huge (two samples of INT64_MAX nanoseconds),
# many-samples (4 million more samples of 1 ns, 24 MB that gzip to 24 KB),
# too-many-samples (empty samples, one more in all than recce reads).
use strict;
use warnings;
use IO::Compress::Gzip qw(gzip $GzipError);

sub varint {
	my ($n) = @_;
	my $s = '';
	# Negative int64 values are 10-byte two's complement varints.
	if ($n < 0) {
		$n = unpack('Q', pack('q', $n));
	}
	while ($n >= 0x80) {
		$s .= chr(($n & 0x7f) | 0x80);
		$n >>= 7;
	}
	return $s . chr($n);
}

sub f_varint { my ($f, $n) = @_; return varint($f << 3) . varint($n); }
sub f_bytes  { my ($f, $b) = @_; return varint(($f << 3) | 2) . varint(length $b) . $b; }
sub f_packed { my ($f, @n) = @_; return f_bytes($f, join('', map { varint($_) } @n)); }

my $kind = shift // 'go';
my @strings = ('');
my %sid;
sub str {
	my ($s) = @_;
	return $sid{$s} //= do { push @strings, $s; $#strings };
}

my $p = '';
# sample_type: samples/count, cpu/nanoseconds (as Go's CPU profiles).
$p .= f_bytes(1, f_varint(1, str('samples')) . f_varint(2, str('count')));
$p .= f_bytes(1, f_varint(1, str('cpu')) . f_varint(2, str('nanoseconds')));

# One mapping: the program.
my $bad_map = $kind eq 'bad-mapping';
$p .= f_bytes(3, f_varint(1, 1) . f_varint(2, 0x400000) . f_varint(3, 0x500000)
	. f_varint(4, 0) . f_varint(5, str('/srv/app/gohot')) . f_varint(7, 1)
	. f_varint(8, 1) . f_varint(9, 1));

# Functions 1..3: runtime.main -> main.main -> main.hotLoop.
my @fn = (['runtime.main', '/usr/lib/go/src/runtime/proc.go', 250],
	  ['main.main', '/srv/app/main.go', 10],
	  ['main.hotLoop', '/srv/app/main.go', 40]);
@fn[2] = ["evil\e]0;PWNED\a\e[2J", "/srv/app/\e[31mred.go", 40] if $kind eq 'evil-names';
for my $i (0 .. $#fn) {
	my ($name, $file, $line) = @{ $fn[$i] };
	my $name_id = str($name);
	$name_id = 9999 if $kind eq 'bad-string' && $i == 2;
	$p .= f_bytes(5, f_varint(1, $i + 1) . f_varint(2, $name_id)
		. f_varint(3, $name_id) . f_varint(4, str($file)) . f_varint(5, $line));
}

# Locations 1..3, one per function, in mapping 1.
for my $i (0 .. 2) {
	my $fid = $i + 1;
	$fid = 77 if $kind eq 'bad-function' && $i == 2;
	my $mid = $bad_map && $i == 2 ? 50 : 1;
	$p .= f_bytes(4, f_varint(1, $i + 1) . f_varint(2, $mid)
		. f_varint(3, 0x401000 + 0x100 * $i)
		. f_bytes(4, f_varint(1, $fid) . f_varint(2, $fn[$i][2] + 2)));
}

# Samples, leaf first: 30 in hotLoop, 5 in main.main itself.
my @hot = (3, 2, 1);
@hot = (999, 2, 1) if $kind eq 'bad-location';
my @vals = (30, 300000000);
@vals = (30, 300000000, 7) if $kind eq 'bad-values';
@vals = (30, 9223372036854775807) if $kind eq 'huge';
$p .= f_bytes(2, f_packed(1, @hot) . f_packed(2, @vals));
$p .= f_bytes(2, f_packed(1, 2, 1) . f_packed(2, 5, $kind eq 'huge' ? 9223372036854775807 : 50000000));

if ($kind eq 'deep') {
	# 3000 nested calls of main.main under runtime.main, then hotLoop.
	$p .= f_bytes(2, f_packed(1, 3, (2) x 3000, 1) . f_packed(2, 1, 10000000));
}

# Samples with no stack: the cheapest a file can make them.
$p .= f_bytes(2, f_packed(2, 1, 1)) x 4000000 if $kind eq 'many-samples';
$p .= f_bytes(2, '') x 4194303 if $kind eq 'too-many-samples';

$p .= f_varint(9, 1700000000000000000);
$p .= f_varint(10, 3000000000);
$p .= f_bytes(11, f_varint(1, str('cpu')) . f_varint(2, str('nanoseconds')));
$p .= f_varint(12, 10000000);
# The string table last, once every string above is interned.
$p .= f_bytes(6, $_) for @strings;

my $gz;
gzip(\$p => \$gz) or die "gzip: $GzipError\n";
binmode STDOUT;
print $gz;
