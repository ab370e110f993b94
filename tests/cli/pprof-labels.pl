#!/usr/bin/perl
# Prints the labels of every sample of a pprof profile (gzip or not), one
# line a sample, for recce's black-box tests: an independent reader of the
# file a user hands to other pprof tools.
#
#   perl tests/cli/pprof-labels.pl FILE
#   -> "VALUE0 key=value key=value ..." per sample, numeric labels as
#      numbers, string labels as strings.
use strict;
use warnings;
use IO::Uncompress::Gunzip qw(gunzip $GunzipError);

my $file = shift or die "usage: pprof-labels.pl FILE\n";
open(my $fh, '<:raw', $file) or die "cannot open $file: $!\n";
my $data = do { local $/; <$fh> };
close $fh;
if (substr($data, 0, 2) eq "\x1f\x8b") {
	my $raw;
	gunzip(\$data => \$raw) or die "gunzip: $GunzipError\n";
	$data = $raw;
}

# Decodes one message into a list of [field, wiretype, value] (value: an
# integer for varints, the bytes for length-delimited fields).
sub fields {
	my ($buf) = @_;
	my @out;
	my $i = 0;
	my $varint = sub {
		my ($n, $shift) = (0, 0);
		while (1) {
			die "truncated varint\n" if $i >= length $buf;
			my $c = ord substr($buf, $i++, 1);
			$n |= ($c & 0x7f) << $shift;
			$shift += 7;
			return $n if $c < 0x80;
		}
	};
	while ($i < length $buf) {
		my $key = $varint->();
		my ($f, $w) = ($key >> 3, $key & 7);
		if ($w == 0) {
			push @out, [$f, 0, $varint->()];
		} elsif ($w == 2) {
			my $len = $varint->();
			push @out, [$f, 2, substr($buf, $i, $len)];
			$i += $len;
		} elsif ($w == 1) {
			push @out, [$f, 1, substr($buf, $i, 8)];
			$i += 8;
		} elsif ($w == 5) {
			push @out, [$f, 5, substr($buf, $i, 4)];
			$i += 4;
		} else {
			die "bad wire type $w\n";
		}
	}
	return @out;
}

# A repeated integer field, packed or not.
sub ints {
	my ($f) = @_;
	return ($f->[2]) if $f->[1] == 0;
	my @n;
	my $b = $f->[2];
	my ($n, $shift) = (0, 0);
	for my $c (map { ord } split //, $b) {
		$n |= ($c & 0x7f) << $shift;
		$shift += 7;
		if ($c < 0x80) {
			push @n, $n;
			($n, $shift) = (0, 0);
		}
	}
	return @n;
}

my @strings;
my @samples;
for my $f (fields($data)) {
	push @strings, $f->[2] if $f->[0] == 6;
	push @samples, $f->[2] if $f->[0] == 2;
}
for my $s (@samples) {
	my (@values, @labels);
	for my $f (fields($s)) {
		push @values, ints($f) if $f->[0] == 2;
		next unless $f->[0] == 3;
		my %l = map { $_->[0] => $_->[2] } fields($f->[2]);
		my $key = $strings[$l{1} // 0] // '?';
		if ($l{2}) {
			push @labels, "$key=" . ($strings[$l{2}] // '?');
		} else {
			push @labels, "$key=" . ($l{3} // 0);
		}
	}
	print join(' ', $values[0] // 0, @labels), "\n";
}
