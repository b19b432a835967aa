#include "search/menu_dropout.h"

namespace autocomp {

QList<int> MenuDropout::draw(int menuSize, double dropout, std::mt19937_64 &rng)
{
    QList<int> kept;
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    for (int i = 0; i < menuSize; ++i)
        if (uniform(rng) >= dropout)
            kept << i;
    if (kept.isEmpty() && menuSize > 0)
        kept << int(std::uniform_int_distribution<int>(0, menuSize - 1)(rng));
    return kept;
}

} // namespace autocomp
