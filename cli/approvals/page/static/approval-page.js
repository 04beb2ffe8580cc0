/* global document */
// The approval page's only script (served from /static, as the CSP requires). Every form works without it; it
// only keeps a double click from posting a decision twice and asks for the provider reference where it is needed.
'use strict';

for (const form of document.querySelectorAll('form[data-once]')) {
  form.addEventListener('submit', (event) => {
    if (form.dataset.submitted === 'yes') {
      event.preventDefault();
      return;
    }
    form.dataset.submitted = 'yes';
  });
}

for (const outcome of document.querySelectorAll('select[name="outcome"]')) {
  const providerRef = outcome.form && outcome.form.querySelector('input[name="providerRef"]');
  if (!providerRef) continue;
  const sync = () => {
    providerRef.required = outcome.value === 'confirmed';
  };
  outcome.addEventListener('change', sync);
  sync();
}
