#pragma once

#include <QList>

#include <random>

namespace autocomp {

// search.menu_dropout (DESIGN.md §1): before each plan request, each menu item is left out of the prompt
// with probability `dropout`, so plans explore beyond the items a model favours. Pure; the engine draws
// with one generator per request (SearchEngine::rngFor), so a seed gives the same menus whatever the order
// in which answers arrive.
class MenuDropout
{
public:
    // The 0-based indices of the items kept, in order; at least one survives a non-empty menu.
    static QList<int> draw(int menuSize, double dropout, std::mt19937_64 &rng);
};

} // namespace autocomp
