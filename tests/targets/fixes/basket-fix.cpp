// The replacement of shop::Basket::total that recce patch loads into
// tests/targets/patchee-cxx: the same sums by a formula, the same
// exception for a negative count, and who = 2.
#include <stdexcept>

namespace shop
{
struct Basket {
	int who = 0;
	long total(int count);
};

long Basket::total(int count)
{
	who = 2;
	if (count < 0)
		throw std::invalid_argument("negative count (fixed)");
	long full = count / 7, rest = count % 7;
	return full * 21 + rest * (rest - 1) / 2;
}
} // namespace shop
